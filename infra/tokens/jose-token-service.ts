// TokenService with jose: ES256 JWTs with a `kid`, issuer = the service's base URL. The signing key pair is
// made on first use and stored with its private half encrypted (SecretCipher); a race between two cold starts
// keeps exactly one current key. Public keys are served at /oauth/jwks.
import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { errors, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK, type CryptoKey } from 'jose';
import { signingKeyContext } from '../../domain/encryption/fields.js';
import { DatabaseError, ServiceUnavailableError } from '../../domain/errors.js';
import { InvalidTokenError, TokenExpiredError } from '../../domain/identity/errors.js';
import type { SecretCipher, TokenService } from '../../domain/identity/ports.js';
import type { TokenClaims, TokenType } from '../../domain/identity/types.js';
import type { SealedNotes } from '../../domain/oauth/ports.js';
import { isConditionFailure } from '../dynamodb/conditional.js';
import { encryptionIndex } from '../dynamodb/encryption-index.js';
import { keys } from '../dynamodb/keys.js';

const ALG = 'ES256';
const AUDIENCE = 'deployer-api';
const TYPES: readonly TokenType[] = ['access', 'two_factor_pending', 'oauth_access'];
/** Sealed notes (SealedNotes) carry another audience, so that no note is ever accepted as a credential. */
const NOTE_AUDIENCE = 'deployer-note';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
}

/** A signing key item with its entry in the encryption index (its private half is a ciphertext). */
const withIndex = (item: Record<string, unknown>) => ({ ...item, ...encryptionIndex('signing_key', item) });
/**
 * A signing key that could not be read (the table throttled or unreachable) is the service's fault, not the token's:
 * it answers 503/500, never 401 (a client would drop a good token; the faults e2e at 50 % saw it).
 */
const unavailable = (error: unknown): boolean =>
  error instanceof DatabaseError || error instanceof ServiceUnavailableError;

export class JoseTokenService implements TokenService, SealedNotes {
  #current: Promise<SigningKey> | undefined;
  readonly #publicKeys = new Map<string, Promise<CryptoKey | undefined>>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cipher: SecretCipher,
    private readonly issuer: string,
    private readonly clock: { now(): Date } = { now: () => new Date() },
  ) {}

  async issue(claims: TokenClaims, ttlSeconds: number): Promise<string> {
    const { kid, privateKey } = await this.#currentKey();
    const issuedAtSeconds = Math.floor(claims.issuedAt / 1000);
    const oauth = claims.oauth;
    return new SignJWT({
      typ: claims.type,
      tid: claims.tenantId,
      ims: claims.issuedAt,
      ...(oauth === undefined ? {} : { client_id: oauth.clientId, gty: oauth.grant, scope: oauth.scope.join(' ') }),
      ...(oauth?.grantId === undefined ? {} : { gid: oauth.grantId }),
      ...(oauth?.actsFor === undefined ? {} : { usr: oauth.actsFor }),
    })
      .setProtectedHeader({ alg: ALG, kid, typ: oauth === undefined ? 'JWT' : 'at+jwt' })
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setSubject(claims.userId)
      .setIssuedAt(issuedAtSeconds)
      .setExpirationTime(issuedAtSeconds + ttlSeconds)
      .setJti(oauth?.tokenId ?? randomUUID())
      .sign(privateKey);
  }

  async verify(token: string): Promise<TokenClaims> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = header.kid === undefined ? undefined : await this.#publicKey(header.kid);
          if (key === undefined) throw new InvalidTokenError('The token was signed by an unknown key.');
          return key;
        },
        { issuer: this.issuer, audience: AUDIENCE, algorithms: [ALG], currentDate: this.clock.now() },
      );
      const type = payload['typ'] as TokenType;
      if (!TYPES.includes(type) || typeof payload.sub !== 'string' || typeof payload['ims'] !== 'number')
        throw new InvalidTokenError();
      const base = {
        type,
        userId: payload.sub,
        tenantId: (payload['tid'] as string | null) ?? null,
        issuedAt: payload['ims'],
      };
      if (type !== 'oauth_access') return base;
      const { client_id: clientId, gty, scope, jti, exp, gid, usr } = payload as Record<string, unknown>;
      if (
        typeof clientId !== 'string' ||
        (gty !== 'client_credentials' && gty !== 'authorization_code') ||
        typeof scope !== 'string' ||
        typeof jti !== 'string' ||
        typeof exp !== 'number' ||
        (gid !== undefined && typeof gid !== 'string') ||
        (usr !== undefined && typeof usr !== 'string')
      )
        throw new InvalidTokenError();
      return {
        ...base,
        oauth: {
          clientId,
          grant: gty,
          scope: scope.split(' ').filter((s) => s !== ''),
          tokenId: jti,
          expiresAt: exp,
          ...(gid === undefined ? {} : { grantId: gid as string }),
          ...(usr === undefined ? {} : { actsFor: usr as string }),
        },
      };
    } catch (error) {
      if (error instanceof errors.JWTExpired) throw new TokenExpiredError();
      if (error instanceof InvalidTokenError || unavailable(error)) throw error;
      throw new InvalidTokenError();
    }
  }

  async seal(purpose: string, data: Readonly<Record<string, unknown>>, ttlSeconds: number): Promise<string> {
    const { kid, privateKey } = await this.#currentKey();
    const now = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({ ...data, pur: purpose })
      .setProtectedHeader({ alg: ALG, kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(NOTE_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(privateKey);
  }

  async unseal(purpose: string, note: string): Promise<Readonly<Record<string, unknown>>> {
    try {
      const { payload } = await jwtVerify(
        note,
        async (header) => {
          const key = header.kid === undefined ? undefined : await this.#publicKey(header.kid);
          if (key === undefined) throw new InvalidTokenError();
          return key;
        },
        { issuer: this.issuer, audience: NOTE_AUDIENCE, algorithms: [ALG], currentDate: this.clock.now() },
      );
      if (payload['pur'] !== purpose) throw new InvalidTokenError();
      return payload;
    } catch (error) {
      if (unavailable(error)) throw error;
      throw new InvalidTokenError('The note is not valid or has expired.');
    }
  }

  /** The public keys, as a JWK Set. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.#currentKey(); // a fresh service publishes the key it will sign with
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :k',
        ExpressionAttributeValues: { ':k': 'SIGNINGKEYS' },
      }),
    );
    return { keys: (Items ?? []).map((item) => item['publicJwk'] as JWK) };
  }

  #currentKey(): Promise<SigningKey> {
    this.#current ??= this.#loadOrCreate().catch((error: unknown) => {
      this.#current = undefined; // retry on the next call rather than caching a failure
      throw error;
    });
    return this.#current;
  }

  async #loadOrCreate(): Promise<SigningKey> {
    const pointer = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.currentSigningKey(), ConsistentRead: true }),
    );
    if (pointer.Item !== undefined) return this.#privateKey(String(pointer.Item['kid']));
    const kid = randomUUID();
    const pair = await generateKeyPair(ALG, { extractable: true });
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: ALG, use: 'sig' };
    const privateJwk = await exportJWK(pair.privateKey);
    const createdAt = this.clock.now().toISOString();
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: withIndex({
                  ...keys.signingKey(kid),
                  ...keys.signingKeysIndex(createdAt, kid),
                  type: 'signing_key',
                  kid,
                  publicJwk,
                  privateKey: this.cipher.encrypt(JSON.stringify(privateJwk), signingKeyContext(kid)),
                  createdAt,
                }),
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: { ...keys.currentSigningKey(), kid },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return { kid, privateKey: pair.privateKey };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return this.#loadOrCreate(); // another instance created the key first: use theirs
    }
  }

  async #privateKey(kid: string): Promise<SigningKey> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.signingKey(kid), ConsistentRead: true }),
    );
    if (Item === undefined) throw new Error(`signing key ${kid} is missing`);
    const jwk = JSON.parse(this.cipher.decrypt(String(Item['privateKey']), signingKeyContext(kid))) as JWK;
    return { kid, privateKey: (await importJWK(jwk, ALG)) as CryptoKey };
  }

  #publicKey(kid: string): Promise<CryptoKey | undefined> {
    let key = this.#publicKeys.get(kid);
    if (key === undefined) {
      key = (async () => {
        // Consistent: a key created a moment ago by another instance (a fresh service's first login) must be found.
        const { Item } = await this.db.send(
          new GetCommand({ TableName: this.tableName, Key: keys.signingKey(kid), ConsistentRead: true }),
        );
        return Item === undefined ? undefined : ((await importJWK(Item['publicJwk'] as JWK, ALG)) as CryptoKey);
      })();
      this.#publicKeys.set(kid, key);
      key.then(
        (found) => found === undefined && this.#publicKeys.delete(kid),
        () => this.#publicKeys.delete(kid),
      );
    }
    return key;
  }
}
