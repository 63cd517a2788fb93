// OidcGateway adapter: discovery, JWKS, the token endpoint and ID token verification (jose), every request through
// the SSRF-guarded client. JWKS are cached per container and per provider (jose's createRemoteJWKSet: refetched on an
// unknown key id, at most once per cooldown, so a rotated key is picked up without a restart).
import {
  createRemoteJWKSet,
  customFetch,
  errors as joseErrors,
  importJWK,
  jwtVerify,
  type JWK,
  type FetchImplementation,
  type JWTVerifyGetKey,
} from 'jose';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import { ProviderRequestError, type OidcGateway, type TokenEndpointProbe } from '../../domain/sso/ports.js';
import type { DiscoveredEndpoints, IdentityProvider, IdTokenClaims } from '../../domain/sso/types.js';
import { guardedFetch, type FetchPolicy } from '../net/guarded-fetch.js';

const providerError = (message: string) => new ProviderRequestError(message);

export interface OidcSettings extends FetchPolicy {
  /** The least time between two JWKS fetches of one provider (an unknown key id waits for it). */
  readonly jwksCooldownMs: number;
}

const parseJson = (body: string, what: string): Record<string, unknown> => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ProviderRequestError(`The ${what} is not JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProviderRequestError(`The ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
};

const stringArray = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The algorithm a JWK without `alg` is imported for (by its key type, or its curve). */
const DEFAULT_ALG: Readonly<Record<string, string>> = {
  RSA: 'RS256',
  'P-256': 'ES256',
  'P-384': 'ES384',
  'P-521': 'ES512',
  Ed25519: 'EdDSA',
};

const withoutSlash = (issuer: string) => issuer.replace(/\/+$/, '');

/** The error codes of RFC 6749 section 5.2: the only words of a token endpoint's answer ever shown to anyone. */
const OAUTH_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
]);

/** The answer's `error` when it is one of RFC 6749's codes; null otherwise (a provider's own text is never echoed). */
const oauthError = (body: string): string | null => {
  try {
    const error = (JSON.parse(body) as { error?: unknown }).error;
    return typeof error === 'string' && OAUTH_ERRORS.has(error) ? error : null;
  } catch {
    return null;
  }
};

const basicAuth = (clientId: string, secret: string): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export class JoseOidcGateway implements OidcGateway {
  readonly #jwks = new Map<string, JWTVerifyGetKey>();

  constructor(private readonly settings: OidcSettings) {}

  async discover(issuer: string): Promise<DiscoveredEndpoints> {
    const url = `${withoutSlash(issuer)}/.well-known/openid-configuration`;
    const response = await guardedFetch({ ...this.settings, fail: providerError }, url, {
      method: 'GET',
      followRedirects: true,
    });
    // Whatever the status, an administrator is told only that it was not a success (docs/security.md, rule 24).
    if (response.status !== 200) throw new ProviderRequestError('The discovery document could not be read (not 2xx).');
    const doc = parseJson(response.body, 'discovery document');
    const required = ['issuer', 'authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const;
    const missing = required.filter((name) => typeof doc[name] !== 'string' || doc[name] === '');
    if (missing.length > 0)
      throw new ProviderRequestError(`This is not an OpenID Connect discovery document: no ${missing.join(', ')}.`);
    if (withoutSlash(doc['issuer'] as string) !== withoutSlash(issuer))
      throw new ProviderRequestError(
        `The discovery document names another issuer (${String(doc['issuer']).slice(0, 200)}) than the one asked for.`,
      );
    return {
      issuer: doc['issuer'] as string,
      authorization_endpoint: doc['authorization_endpoint'] as string,
      token_endpoint: doc['token_endpoint'] as string,
      userinfo_endpoint: typeof doc['userinfo_endpoint'] === 'string' ? doc['userinfo_endpoint'] : null,
      jwks_uri: doc['jwks_uri'] as string,
      scopes_supported: stringArray(doc['scopes_supported']),
      claims_supported: stringArray(doc['claims_supported']),
      id_token_signing_alg_values_supported: stringArray(doc['id_token_signing_alg_values_supported']),
      token_endpoint_auth_methods_supported: stringArray(doc['token_endpoint_auth_methods_supported']),
      code_challenge_methods_supported: stringArray(doc['code_challenge_methods_supported']),
    };
  }

  async jwksKeyCount(jwksUri: string): Promise<number> {
    const response = await guardedFetch({ ...this.settings, fail: providerError }, jwksUri, {
      method: 'GET',
      followRedirects: true,
    });
    if (response.status !== 200) throw new ProviderRequestError('The JWKS could not be read (not 2xx).');
    const keys = parseJson(response.body, 'JWKS')['keys'];
    if (!Array.isArray(keys)) throw new ProviderRequestError('The JWKS has no keys array.');
    // A key counts when jose imports it as a public signing key (a malformed one, or a private one, does not).
    let usable = 0;
    for (const key of keys) {
      if (typeof key !== 'object' || key === null || (key as JWK).use === 'enc' || 'd' in key) continue;
      const jwk = key as JWK;
      const alg = jwk.alg ?? DEFAULT_ALG[jwk.kty === 'RSA' ? 'RSA' : (jwk.crv ?? '')];
      if (alg === undefined) continue;
      try {
        await importJWK(jwk, alg);
        usable += 1;
      } catch {
        // not a usable key
      }
    }
    return usable;
  }

  async probeTokenEndpoint(
    provider: IdentityProvider,
    clientSecret: string,
    redirectUri: string,
  ): Promise<TokenEndpointProbe> {
    const response = await this.tokenRequest(provider, clientSecret, {
      grant_type: 'authorization_code',
      code: `connection-test-${Date.now()}`,
      redirect_uri: redirectUri,
      code_verifier: 'connection-test-verifier-0000000000000000000000000',
    });
    return { status: response.status, error: oauthError(response.body) };
  }

  async exchangeCode(
    provider: IdentityProvider,
    clientSecret: string,
    exchange: { readonly code: string; readonly codeVerifier: string; readonly redirectUri: string },
  ): Promise<{ readonly idToken: string }> {
    const response = await this.tokenRequest(provider, clientSecret, {
      grant_type: 'authorization_code',
      code: exchange.code,
      redirect_uri: exchange.redirectUri,
      code_verifier: exchange.codeVerifier,
    });
    if (response.status !== 200) {
      // An OAuth error in a 4xx is the provider saying no (the user's sign-in is refused); anything else is the
      // provider failing (EXTERNAL_SERVICE_ERROR at the callback).
      const error = oauthError(response.body);
      const refusal = error !== null && response.status >= 400 && response.status < 500;
      throw new ProviderRequestError(
        `the token endpoint ${refusal ? 'refused the code' : 'failed'} (not 2xx${error === null ? '' : `: ${error}`}).`,
        refusal,
      );
    }
    const idToken = parseJson(response.body, 'token response')['id_token'];
    if (typeof idToken !== 'string' || idToken === '')
      throw new ProviderRequestError('the token endpoint answered no ID token.');
    return { idToken };
  }

  async verifyIdToken(provider: IdentityProvider, idToken: string, now: Date): Promise<IdTokenClaims> {
    try {
      const { payload } = await jwtVerify(idToken, this.keysOf(provider), {
        issuer: [withoutSlash(provider.issuer), `${withoutSlash(provider.issuer)}/`],
        audience: provider.clientId,
        algorithms: [...provider.idTokenAlgorithms],
        currentDate: now,
        clockTolerance: 30,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      // With several audiences the token must name this client as the authorized party (OIDC Core 3.1.3.7).
      if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload['azp'] !== provider.clientId)
        throw new InvalidTokenError('The ID token was issued to another client (azp).');
      return payload as IdTokenClaims;
    } catch (error) {
      throw this.invalid(error);
    }
  }

  private keysOf(provider: IdentityProvider): JWTVerifyGetKey {
    const cacheKey = `${provider.id} ${provider.jwksUri}`;
    let keys = this.#jwks.get(cacheKey);
    if (keys === undefined) {
      const fetchGuarded: FetchImplementation = async (url) => {
        const response = await guardedFetch({ ...this.settings, fail: providerError }, String(url), {
          method: 'GET',
          followRedirects: true,
        });
        // The provider failing to serve its keys is its failure, not the ID token's (EXTERNAL_SERVICE_ERROR).
        if (response.status !== 200) throw new ProviderRequestError('The JWKS could not be read (not 2xx).');
        parseJson(response.body, 'JWKS');
        return new Response(response.body, {
          status: response.status,
          headers: { 'content-type': 'application/json' },
        });
      };
      keys = createRemoteJWKSet(new URL(provider.jwksUri), {
        cooldownDuration: this.settings.jwksCooldownMs,
        timeoutDuration: this.settings.timeoutMs,
        [customFetch]: fetchGuarded,
      });
      this.#jwks.set(cacheKey, keys);
    }
    return keys;
  }

  private tokenRequest(provider: IdentityProvider, clientSecret: string, params: Record<string, string>) {
    const form = new URLSearchParams(params);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (provider.tokenAuthMethod === 'client_secret_basic')
      headers['authorization'] = basicAuth(provider.clientId, clientSecret);
    else {
      form.set('client_id', provider.clientId);
      form.set('client_secret', clientSecret);
    }
    return guardedFetch({ ...this.settings, fail: providerError }, provider.tokenEndpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
    });
  }

  private invalid(error: unknown): InvalidTokenError {
    if (error instanceof InvalidTokenError) return error;
    if (error instanceof joseErrors.JWTExpired) return new InvalidTokenError('The ID token has expired.');
    if (error instanceof joseErrors.JWTClaimValidationFailed)
      return new InvalidTokenError(`The ID token's ${error.claim} claim is not valid (${error.reason}).`);
    if (error instanceof joseErrors.JWSSignatureVerificationFailed)
      return new InvalidTokenError('The ID token signature does not verify.');
    if (error instanceof joseErrors.JOSEAlgNotAllowed)
      return new InvalidTokenError('The ID token is signed with an algorithm the provider does not announce.');
    if (error instanceof joseErrors.JWKSNoMatchingKey)
      return new InvalidTokenError("The ID token's signing key is not in the provider's JWKS.");
    // The keys could not be fetched: the provider failed, not the token; the sign-in answers EXTERNAL_SERVICE_ERROR.
    if (error instanceof ProviderRequestError) throw error;
    if (error instanceof joseErrors.JWKSTimeout)
      throw new ProviderRequestError('The JWKS could not be read (timeout).');
    if (error instanceof joseErrors.JWKSInvalid) throw new ProviderRequestError('The JWKS is not a valid key set.');
    if (error instanceof joseErrors.JOSEError)
      return new InvalidTokenError(`The ID token is not valid (${error.code}).`);
    throw error;
  }
}
