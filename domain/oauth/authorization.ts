// The authorization code grant (RFC 6749 4.1) with PKCE (RFC 7636) and refresh tokens (RFC 6749 6), per the OAuth 2.0
// Security BCP (RFC 9700): exact redirect URIs, PKCE S256 (required of public clients), single-use codes bound to
// client, redirect URI and challenge (a second use revokes the grant), refresh tokens rotated on every use (a
// retired one presented again revokes the grant), authorization responses carrying `iss` (RFC 9207).
import { createHash } from 'node:crypto';
import type { Permission } from '../identity/permissions.js';
import type { User } from '../identity/types.js';
import { authenticateClient, grantedScope, OAuthError, type ClientCredentials, type OAuthTokenDeps } from './tokens.js';
import type { OAuthGrantStore, RefreshGrant } from './ports.js';
import type { OAuthClient } from './types.js';

/** How long an authorization code may be exchanged (RFC 6749 4.1.2 recommends at most 10 minutes). */
export const CODE_TTL_SECONDS = 60;
export const REFRESH_TOKEN_PREFIX = 'dplr_';

export interface AuthorizationDeps extends OAuthTokenDeps {
  readonly grants: OAuthGrantStore;
  readonly refreshTokenTtlSeconds: number;
}

/** A checked authorization request: what the page carries (sealed) from the first GET to the code. */
export interface AuthorizationRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: readonly string[];
  readonly state: string | null;
  readonly codeChallenge: string | null;
}

/** What to do with an authorization request that cannot go on. */
export type AuthorizationProblem =
  /** Unknown client or a redirect URI that is not registered: shown on a page, never redirected (RFC 6749 4.1.2.1). */
  | { readonly kind: 'page'; readonly message: string }
  /** Anything else: back to the client's redirect URI with `error` (and `state`). */
  | {
      readonly kind: 'redirect';
      readonly redirectUri: string;
      readonly error: string;
      readonly description: string;
      readonly state: string | null;
    };

const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_STATE = 2000;

/** The S256 challenge of a verifier (RFC 7636 4.2). */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** `uri` with the parameters added to its query (a registered URI may carry a query of its own). */
export const withParams = (uri: string, params: Readonly<Record<string, string | null | undefined>>): string => {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params))
    if (value !== null && value !== undefined) url.searchParams.set(name, value);
  return url.toString();
};

/**
 * Checks the query of GET /oauth/authorize: the client and redirect URI first (their problems are shown, not
 * redirected), then the rest (redirected with an RFC 6749 4.1.2.1 error).
 */
export const checkAuthorizationRequest = async (
  deps: Pick<AuthorizationDeps, 'clients'>,
  query: URLSearchParams,
): Promise<{ client: OAuthClient; request: AuthorizationRequest } | AuthorizationProblem> => {
  const once = (name: string): string | undefined | null => {
    const values = query.getAll(name);
    return values.length > 1 ? null : values[0];
  };
  const clientId = once('client_id');
  if (clientId === null || once('redirect_uri') === null)
    return { kind: 'page', message: 'client_id and redirect_uri may be given only once.' };
  if (clientId === undefined || clientId === '')
    return { kind: 'page', message: 'The request names no client (client_id).' };
  const client = await deps.clients.findByClientId(clientId);
  if (client === undefined || !client.isActive)
    return { kind: 'page', message: 'The application that sent you here is not known, or no longer allowed.' };
  const asked = once('redirect_uri');
  const redirectUri =
    asked === undefined || asked === null
      ? client.redirectUris.length === 1
        ? client.redirectUris[0]
        : undefined
      : client.redirectUris.find((registered) => registered === asked);
  if (redirectUri === undefined)
    return {
      kind: 'page',
      message:
        asked === undefined
          ? 'The request names no redirect_uri, and the application has several.'
          : 'The redirect_uri is not one the application registered (they are compared exactly).',
    };

  const stateValue = once('state');
  const state = typeof stateValue === 'string' ? stateValue.slice(0, MAX_STATE) : null;
  const fail = (error: string, description: string): AuthorizationProblem => ({
    kind: 'redirect',
    redirectUri,
    error,
    description,
    state,
  });
  for (const name of ['response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method'])
    if (once(name) === null) return fail('invalid_request', `${name} is given more than once.`);
  const responseType = once('response_type');
  if (responseType !== 'code')
    return fail('unsupported_response_type', 'Only response_type=code is supported (the authorization code grant).');
  if (!client.grantTypes.includes('authorization_code'))
    return fail('unauthorized_client', 'This client may not use the authorization code grant.');
  const challenge = once('code_challenge') ?? undefined;
  const method = once('code_challenge_method') ?? undefined;
  if (challenge === undefined) {
    if (!client.isConfidential)
      return fail('invalid_request', 'A public client must use PKCE: code_challenge and code_challenge_method=S256.');
    if (method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge.');
  } else {
    if (method !== 'S256')
      return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted).');
    if (!PKCE_VALUE.test(challenge)) return fail('invalid_request', 'code_challenge is not a valid S256 challenge.');
  }
  let scope: Permission[];
  try {
    scope = grantedScope(client, once('scope') ?? undefined);
  } catch (error) {
    if (error instanceof OAuthError) return fail(error.code, error.description);
    throw error;
  }
  return {
    client,
    request: { clientId: client.clientId, redirectUri, scope, state, codeChallenge: challenge ?? null },
  };
};

/** The scope a user can grant: what was asked for and the user holds now (the token is narrowed again on use). */
export const grantableScope = (request: AuthorizationRequest, held: ReadonlySet<Permission>): string[] =>
  request.scope.filter((s) => held.has(s as Permission));

/** The code for an approved request (stored by its hash, single use, CODE_TTL_SECONDS). */
export const issueCode = async (
  deps: Pick<AuthorizationDeps, 'grants' | 'random' | 'clock'>,
  request: AuthorizationRequest,
  user: User,
  scope: readonly string[],
  authTime: number,
): Promise<string> => {
  const code = deps.random.random();
  await deps.grants.saveCode({
    codeHash: deps.random.hash(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    userId: user.id,
    scope,
    codeChallenge: request.codeChallenge,
    grantId: deps.random.random(16),
    authTime,
    expiresAt: deps.clock.now().getTime() + CODE_TTL_SECONDS * 1000,
  });
  return code;
};

/**
 * The client of a code or refresh exchange: a confidential client authenticates with its secret; a public one only
 * names itself (its codes are bound to a PKCE verifier, its refresh tokens to itself and rotated).
 */
export const authenticateTokenClient = async (
  deps: Pick<AuthorizationDeps, 'clients' | 'random'>,
  credentials: ClientCredentials,
): Promise<OAuthClient> => {
  if (credentials.method !== 'none') return authenticateClient(deps, credentials);
  const client = await deps.clients.findByClientId(credentials.clientId);
  if (client === undefined || client.isConfidential || !client.isActive)
    throw new OAuthError('invalid_client', 'Client authentication failed.');
  return client;
};

export interface UserTokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly scope: string;
  readonly refresh_token?: string;
}

/** How long a revoked grant must be remembered: past the last refresh or access token it could have produced. */
const grantMemorySeconds = (deps: AuthorizationDeps): number =>
  Math.floor(deps.clock.now().getTime() / 1000) + deps.refreshTokenTtlSeconds + deps.accessTokenTtlSeconds;

const revokeGrant = (deps: AuthorizationDeps, grantId: string) =>
  deps.revocations.revokeGrant(grantId, grantMemorySeconds(deps));

const activeUser = async (deps: AuthorizationDeps, userId: string, authTime: number): Promise<User> => {
  const user = await deps.users.get(userId);
  if (user === undefined || user.status !== 'active' || authTime <= user.tokensValidAfter)
    throw new OAuthError('invalid_grant', 'The account is not active, or signed out since this grant.');
  return user;
};

const accessTokenFor = async (
  deps: AuthorizationDeps,
  client: OAuthClient,
  user: User,
  grantId: string,
  scope: readonly string[],
) => {
  const now = deps.clock.now().getTime();
  return deps.tokens.issue(
    {
      type: 'oauth_access',
      userId: user.id,
      tenantId: user.tenantId,
      issuedAt: now,
      oauth: {
        clientId: client.clientId,
        grant: 'authorization_code',
        scope,
        tokenId: deps.random.random(16),
        expiresAt: Math.floor(now / 1000) + deps.accessTokenTtlSeconds,
        grantId,
      },
    },
    deps.accessTokenTtlSeconds,
  );
};

const newRefresh = (
  deps: AuthorizationDeps,
  from: Pick<RefreshGrant, 'grantId' | 'clientId' | 'userId' | 'scope' | 'authTime'>,
): { token: string; record: RefreshGrant } => {
  const token = `${REFRESH_TOKEN_PREFIX}${deps.random.random()}`;
  return {
    token,
    record: {
      ...from,
      tokenHash: deps.random.hash(token),
      expiresAt: deps.clock.now().getTime() + deps.refreshTokenTtlSeconds * 1000,
      status: 'active',
    },
  };
};

/** grant_type=authorization_code (RFC 6749 4.1.3, RFC 7636 4.6). */
export const authorizationCodeGrant = async (
  deps: AuthorizationDeps,
  client: OAuthClient,
  form: { code?: string | undefined; redirectUri?: string | undefined; codeVerifier?: string | undefined },
): Promise<UserTokenResponse> => {
  if (!client.grantTypes.includes('authorization_code'))
    throw new OAuthError('unauthorized_client', 'This client may not use the authorization code grant.');
  if (form.code === undefined || form.code === '') throw new OAuthError('invalid_request', 'code is required.');
  const bad = new OAuthError('invalid_grant', 'The code is not valid, has expired, or was issued to another client.');
  const codeHash = deps.random.hash(form.code);
  const code = await deps.grants.getCode(codeHash);
  if (code === undefined || code.clientId !== client.clientId) throw bad;
  if (form.redirectUri !== code.redirectUri)
    throw new OAuthError('invalid_grant', 'redirect_uri must be the one of the authorization request.');
  if (code.codeChallenge === null) {
    if (form.codeVerifier !== undefined)
      throw new OAuthError('invalid_grant', 'code_verifier given for a code requested without PKCE.');
  } else if (
    form.codeVerifier === undefined ||
    !PKCE_VALUE.test(form.codeVerifier) ||
    s256(form.codeVerifier) !== code.codeChallenge
  ) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
  }
  if (code.expiresAt <= deps.clock.now().getTime()) throw bad;
  // Checked before it is spent, so that a thief without the verifier cannot burn the client's code.
  if (!(await deps.grants.useCode(codeHash))) {
    await revokeGrant(deps, code.grantId);
    throw new OAuthError('invalid_grant', 'The code was used already: every token it produced is revoked.');
  }
  const user = await activeUser(deps, code.userId, code.authTime);
  const response: UserTokenResponse = {
    access_token: await accessTokenFor(deps, client, user, code.grantId, code.scope),
    token_type: 'Bearer',
    expires_in: deps.accessTokenTtlSeconds,
    scope: code.scope.join(' '),
  };
  if (!client.grantTypes.includes('refresh_token')) return response;
  const refresh = newRefresh(deps, { ...code, clientId: client.clientId });
  await deps.grants.saveRefresh(refresh.record);
  return { ...response, refresh_token: refresh.token };
};

/** grant_type=refresh_token (RFC 6749 6): rotated on every use; a retired token presented again revokes the grant. */
export const refreshTokenGrant = async (
  deps: AuthorizationDeps,
  client: OAuthClient,
  form: { refreshToken?: string | undefined; scope?: string | undefined },
): Promise<UserTokenResponse> => {
  if (!client.grantTypes.includes('refresh_token'))
    throw new OAuthError('unauthorized_client', 'This client may not use refresh tokens.');
  if (form.refreshToken === undefined || form.refreshToken === '')
    throw new OAuthError('invalid_request', 'refresh_token is required.');
  const bad = new OAuthError('invalid_grant', 'The refresh token is not valid, has expired, or was revoked.');
  const hash = deps.random.hash(form.refreshToken);
  const current = await deps.grants.getRefresh(hash);
  if (current === undefined || current.clientId !== client.clientId) throw bad;
  if (current.status === 'rotated') {
    await revokeGrant(deps, current.grantId);
    throw new OAuthError('invalid_grant', 'The refresh token was used already: the grant is revoked.');
  }
  if (current.expiresAt <= deps.clock.now().getTime()) throw bad;
  let scope = current.scope;
  if (form.scope !== undefined && form.scope.trim() !== '') {
    const asked = [...new Set(form.scope.split(' ').filter((s) => s !== ''))];
    const beyond = asked.filter((s) => !current.scope.includes(s));
    if (beyond.length > 0) throw new OAuthError('invalid_scope', `Not in the original grant: ${beyond.join(' ')}.`);
    scope = asked;
  }
  const user = await activeUser(deps, current.userId, current.authTime);
  const next = newRefresh(deps, current);
  // The rotation's transaction also checks that the grant is not revoked: a revocation is read only when it fails.
  if (!(await deps.grants.rotateRefresh(hash, next.record))) {
    if (await deps.revocations.isGrantRevoked(current.grantId)) throw bad;
    // Another exchange of the same token won the race (a reuse): the grant goes.
    await revokeGrant(deps, current.grantId);
    throw new OAuthError('invalid_grant', 'The refresh token was used already: the grant is revoked.');
  }
  return {
    access_token: await accessTokenFor(deps, client, user, current.grantId, scope),
    token_type: 'Bearer',
    expires_in: deps.accessTokenTtlSeconds,
    scope: scope.join(' '),
    refresh_token: next.token,
  };
};

/** A refresh token of this client (by its value), or undefined (RFC 7009 / 7662 on refresh tokens). */
export const refreshTokenOf = async (
  deps: Pick<AuthorizationDeps, 'grants' | 'random'>,
  client: OAuthClient,
  token: string,
): Promise<RefreshGrant | undefined> => {
  if (!token.startsWith(REFRESH_TOKEN_PREFIX)) return undefined;
  const found = await deps.grants.getRefresh(deps.random.hash(token));
  return found?.clientId === client.clientId ? found : undefined;
};

/** RFC 7009 2.1: revoking a refresh token revokes its grant (the access tokens it produced included). */
export const revokeRefreshToken = async (deps: AuthorizationDeps, refresh: RefreshGrant): Promise<void> =>
  revokeGrant(deps, refresh.grantId);

/** RFC 7662 for a refresh token: active while it is the grant's current one, unexpired, and its user active. */
export const introspectRefreshToken = async (
  deps: AuthorizationDeps,
  refresh: RefreshGrant,
  issuer: string,
): Promise<Record<string, unknown>> => {
  if (refresh.status !== 'active' || refresh.expiresAt <= deps.clock.now().getTime()) return { active: false };
  if (await deps.revocations.isGrantRevoked(refresh.grantId)) return { active: false };
  try {
    await activeUser(deps, refresh.userId, refresh.authTime);
  } catch {
    return { active: false };
  }
  return {
    active: true,
    scope: refresh.scope.join(' '),
    client_id: refresh.clientId,
    sub: refresh.userId,
    token_type: 'refresh_token',
    exp: Math.floor(refresh.expiresAt / 1000),
    iss: issuer,
  };
};
