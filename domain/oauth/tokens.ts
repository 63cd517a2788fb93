// The OAuth 2.0 authorization server's token side (RFC 6749, 7009, 7662): client authentication, the
// client_credentials grant, revocation and introspection, and the caller an OAuth access token stands for on the API.
// Errors are RFC 6749 section 5.2 codes (OAuthError), answered by the /oauth handlers in the RFC's shape.
import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../shared/ports.js';
import { ForbiddenError, InvalidTokenError } from '../identity/errors.js';
import { callerOfCredential } from '../identity/delegation.js';
import { isPermission, type Permission } from '../identity/permissions.js';
import type {
  RateLimiter,
  RatePolicy,
  RoleDirectory,
  TokenGenerator,
  TokenService,
  UserRepository,
} from '../identity/ports.js';
import type { Caller, TokenClaims } from '../identity/types.js';
import type { OAuthClientRepository, TokenRevocations } from './ports.js';
import type { OAuthClient } from './types.js';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  | 'temporarily_unavailable';

/** An RFC 6749 error: 400, or 401 for invalid_client (with WWW-Authenticate when Basic was tried). */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** Set for `temporarily_unavailable` (429): when to ask again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
  }
  get status(): number {
    if (this.code === 'temporarily_unavailable') return 429;
    return this.code === 'invalid_client' ? 401 : 400;
  }
}

export interface OAuthTokenDeps {
  readonly clients: Pick<OAuthClientRepository, 'findByClientId'>;
  readonly revocations: TokenRevocations;
  readonly tokens: TokenService;
  readonly users: Pick<UserRepository, 'get'>;
  readonly roles: RoleDirectory;
  readonly random: TokenGenerator;
  readonly clock: Clock;
  readonly accessTokenTtlSeconds: number;
  /** The shared token bucket: token requests per client (beside the general limit per address). */
  readonly limiter: RateLimiter;
}

/** Token requests one client may make: 5 a second, bursts of 20 (a pipeline caches its token for its lifetime). */
export const TOKEN_REQUESTS_PER_CLIENT: RatePolicy = { ratePerSecond: 5, burst: 20 };

/**
 * Counts a token request of an authenticated client; past the limit, temporarily_unavailable (429, Retry-After).
 * Counted after authentication, so nobody can spend another client's budget with its public client_id.
 */
export const throttleClient = async (
  deps: Pick<OAuthTokenDeps, 'limiter' | 'clock'>,
  client: OAuthClient,
): Promise<void> => {
  const decision = await deps.limiter.take(
    `oauthclient#${client.clientId}`,
    TOKEN_REQUESTS_PER_CLIENT,
    deps.clock.now(),
  );
  if (!decision.allowed)
    throw new OAuthError(
      'temporarily_unavailable',
      `Too many token requests for this client: retry in ${decision.retryAfterSeconds} s.`,
      decision.retryAfterSeconds,
    );
};

/** The credentials a client presented: HTTP Basic (client_secret_basic) or form fields (client_secret_post). */
export interface ClientCredentials {
  readonly clientId: string;
  readonly secret: string | undefined;
  readonly method: 'client_secret_basic' | 'client_secret_post' | 'none';
}

const sameHash = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The active confidential client these credentials prove; invalid_client for anything else (one message for all). */
export const authenticateClient = async (
  deps: Pick<OAuthTokenDeps, 'clients' | 'random'>,
  credentials: ClientCredentials,
): Promise<OAuthClient> => {
  const refused = new OAuthError('invalid_client', 'Client authentication failed.');
  const client = await deps.clients.findByClientId(credentials.clientId);
  if (client === undefined || credentials.secret === undefined || client.secretHash === null) {
    deps.random.hash(credentials.secret ?? ''); // about the same work either way
    throw refused;
  }
  if (!sameHash(deps.random.hash(credentials.secret), client.secretHash)) throw refused;
  if (!client.isActive) throw refused;
  return client;
};

/** The scope asked for (space-separated), checked against what the client may have; all of it when none is asked. */
export const grantedScope = (client: OAuthClient, requested: string | undefined): Permission[] => {
  if (requested === undefined || requested.trim() === '') return [...client.scopes];
  const asked = [...new Set(requested.split(' ').filter((s) => s !== ''))];
  const beyond = asked.filter((s) => !client.scopes.includes(s as Permission));
  if (beyond.length > 0) throw new OAuthError('invalid_scope', `The client may not be granted: ${beyond.join(' ')}.`);
  return asked as Permission[];
};

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly scope: string;
}

/** client_credentials (RFC 6749 4.4): a token for the client itself (sub = client_id), acting for its creator. */
export const clientCredentialsGrant = async (
  deps: OAuthTokenDeps,
  client: OAuthClient,
  requestedScope: string | undefined,
): Promise<TokenResponse> => {
  if (!client.grantTypes.includes('client_credentials'))
    throw new OAuthError('unauthorized_client', 'This client may not use the client_credentials grant.');
  const scope = grantedScope(client, requestedScope);
  const creator = await deps.users.get(client.createdBy);
  if (creator === undefined || creator.status !== 'active')
    throw new OAuthError('invalid_grant', 'The account this client acts for is not active.');
  const now = deps.clock.now().getTime();
  const claims: TokenClaims = {
    type: 'oauth_access',
    userId: client.clientId,
    tenantId: client.tenantId,
    issuedAt: now,
    oauth: {
      clientId: client.clientId,
      grant: 'client_credentials',
      scope,
      tokenId: deps.random.random(16),
      expiresAt: Math.floor(now / 1000) + deps.accessTokenTtlSeconds,
      actsFor: client.createdBy,
    },
  };
  return {
    access_token: await deps.tokens.issue(claims, deps.accessTokenTtlSeconds),
    token_type: 'Bearer',
    expires_in: deps.accessTokenTtlSeconds,
    scope: scope.join(' '),
  };
};

/**
 * The caller an OAuth access token stands for on the API: the user (a client_credentials token: the client's
 * creator) as of now, narrowed to the granted scope. Revoked tokens, gone clients and inactive accounts are refused;
 * a deactivated client's tokens stay valid until they expire (spec, Authentication 9).
 */
export const callerOfOAuthToken = async (
  deps: Pick<OAuthTokenDeps, 'clients' | 'revocations' | 'users' | 'roles'>,
  claims: TokenClaims,
): Promise<Caller> => {
  const oauth = claims.oauth;
  if (oauth === undefined) throw new InvalidTokenError();
  if (await deps.revocations.isRevoked(oauth.tokenId, oauth.grantId))
    throw new InvalidTokenError('The token was revoked.');
  // Clients are never deleted (DELETE deactivates, and issued tokens stay valid): the client is read only for a
  // client_credentials token that does not name the user it acts for (issued before tokens carried it).
  let userId = claims.userId;
  if (oauth.grant === 'client_credentials') {
    const actsFor = oauth.actsFor ?? (await deps.clients.findByClientId(oauth.clientId))?.createdBy;
    if (actsFor === undefined) throw new InvalidTokenError('The client of this token no longer exists.');
    userId = actsFor;
  }
  const user = await deps.users.get(userId);
  if (user === undefined) throw new InvalidTokenError('The account of this token no longer exists.');
  if (oauth.grant !== 'client_credentials' && claims.issuedAt <= user.tokensValidAfter)
    throw new InvalidTokenError('The token was revoked (logout or an account change).');
  if (user.status !== 'active')
    throw new ForbiddenError(`The account is ${user.status}.`, { reason: 'account_not_active' });
  return callerOfCredential(deps.roles, user, {
    type: 'oauth',
    id: oauth.clientId,
    scopes: oauth.scope.filter((s): s is Permission => isPermission(s)),
    grant: oauth.grant,
  });
};

/** RFC 7009: a token this client holds is revoked; anything else (unknown, malformed, another client's) is ignored. */
export const revokeToken = async (
  deps: Pick<OAuthTokenDeps, 'tokens' | 'revocations'>,
  client: OAuthClient,
  token: string,
): Promise<void> => {
  let claims: TokenClaims;
  try {
    claims = await deps.tokens.verify(token);
  } catch {
    return;
  }
  if (claims.oauth === undefined || claims.oauth.clientId !== client.clientId) return;
  await deps.revocations.revoke(claims.oauth.tokenId, claims.oauth.expiresAt);
};

/** RFC 7662: what a client may learn about a token it holds; `active: false` for anything else. */
export const introspectToken = async (
  deps: Pick<OAuthTokenDeps, 'tokens' | 'revocations' | 'clients' | 'users' | 'roles'>,
  client: OAuthClient,
  token: string,
  issuer: string,
): Promise<Record<string, unknown>> => {
  let claims: TokenClaims;
  try {
    claims = await deps.tokens.verify(token);
  } catch {
    return { active: false };
  }
  const oauth = claims.oauth;
  if (oauth === undefined || oauth.clientId !== client.clientId) return { active: false };
  try {
    await callerOfOAuthToken(deps, claims);
  } catch {
    return { active: false };
  }
  return {
    active: true,
    scope: oauth.scope.join(' '),
    client_id: oauth.clientId,
    sub: claims.userId,
    token_type: 'Bearer',
    exp: oauth.expiresAt,
    iat: Math.floor(claims.issuedAt / 1000),
    iss: issuer,
    jti: oauth.tokenId,
  };
};
