// Event streams take no Authorization header: a caller trades its credential for a single-use token that lives
// 60 s (consumed atomically when a stream opens), plus a session id and refresh token to get the next one
// without the original credential (user logins only: a session an API key started is not renewed, 403).
// Every use re-checks the account (and the API key), so logout, deactivation or revocation end stream access too.
import type { IdentityDeps } from './deps.js';
import { callerOfApiKey } from './api-keys.js';
import { ForbiddenError, InvalidTokenError } from './errors.js';
import { personName } from './names.js';
import type { SseGrant } from './ports.js';
import type { Caller } from './types.js';
import { closeRevokedViewers } from './viewers.js';

export interface SseTokenResult {
  readonly sse_token: string;
  readonly expires_in: number;
  readonly session_id: string;
  readonly refresh_token: string;
  /** Where the token also opens the viewer channel (a WebSocket); null without one. */
  readonly socket_url: string | null;
}

const mint = async (deps: IdentityDeps, grant: SseGrant, refreshToken: string): Promise<SseTokenResult> => {
  const token = deps.random.random();
  const expiresAt = new Date(deps.clock.now().getTime() + deps.settings.sseTokenTtlSeconds * 1000);
  await deps.sseTokens.putToken(deps.random.hash(token), grant, expiresAt);
  return {
    sse_token: token,
    expires_in: deps.settings.sseTokenTtlSeconds,
    session_id: grant.sessionId,
    refresh_token: refreshToken,
    socket_url: deps.settings.viewerSocketUrl ?? null,
  };
};

export const issueSseToken = async (deps: IdentityDeps, caller: Caller): Promise<SseTokenResult> => {
  // A grant re-checks a user login or an API key; an OAuth token's narrower scope would not survive it.
  if (caller.kind === 'oauth' || caller.kind === 'trigger')
    throw new ForbiddenError('Event streams take a user login or an API key, not an OAuth access token.', {
      reason: 'user_credentials_required',
    });
  const now = deps.clock.now();
  const grant: SseGrant = {
    kind: caller.kind,
    userId: caller.userId,
    apiKeyId: caller.apiKeyId ?? null,
    sessionId: deps.random.random(16),
    sessionStartedAt: now.getTime(),
  };
  const refreshToken = deps.random.random();
  await deps.sseTokens.putSession(
    grant,
    deps.random.hash(refreshToken),
    new Date(now.getTime() + deps.settings.sseSessionTtlSeconds * 1000),
  );
  return mint(deps, grant, refreshToken);
};

export const refreshSseToken = async (
  deps: IdentityDeps,
  command: { sessionId: string; refreshToken: string },
): Promise<SseTokenResult> => {
  const next = deps.random.random();
  const grant = await deps.sseTokens.rotateSession(
    command.sessionId,
    deps.random.hash(command.refreshToken),
    deps.random.hash(next),
    deps.clock.now(),
  );
  if (grant === undefined) {
    // A refresh token that is not the session's current one is a retired one replayed (or forged by someone who
    // holds the session id): either way the chain leaked, so the session ends, with every token and stream it gave.
    const ended = await deps.sseTokens.endSession(command.sessionId);
    if (ended !== undefined) await closeRevokedViewers(deps, { userId: ended.userId, sseSessionId: command.sessionId });
    throw new InvalidTokenError(
      'The SSE session or its refresh token is not valid (a reused refresh token ends its session): request a new SSE token.',
    );
  }
  // Renewing a session without presenting a credential is for user logins; an API key asks again with itself.
  if (grant.kind !== 'user')
    throw new ForbiddenError(
      'Only sessions of a user login can be renewed: request a new SSE token with the API key.',
      { reason: 'user_credentials_required' },
    );
  if ((await callerOf(deps, grant)) === undefined)
    throw new InvalidTokenError('The credential behind this SSE session is no longer valid.');
  return mint(deps, grant, next);
};

/** What reading the caller behind a grant takes. */
type GrantDeps = Pick<IdentityDeps, 'users' | 'roles' | 'apiKeys' | 'clock'>;

/** The caller behind a grant, as of now; undefined when the account, its tokens or the key no longer allow it. */
const callerOf = async (deps: GrantDeps, grant: SseGrant): Promise<Caller | undefined> => {
  if (grant.kind === 'api_key') {
    const key = grant.apiKeyId === null ? undefined : await deps.apiKeys.get(grant.apiKeyId);
    const now = deps.clock.now().getTime();
    if (key === undefined || key.revokedAt !== null || (key.expiresAt !== null && Date.parse(key.expiresAt) <= now))
      return undefined;
    return callerOfApiKey(deps, key);
  }
  const user = await deps.users.get(grant.userId);
  if (user === undefined || user.status !== 'active' || grant.sessionStartedAt <= user.tokensValidAfter)
    return undefined;
  return {
    kind: 'user',
    userId: user.id,
    userName: personName(user),
    tenantId: user.tenantId,
    roles: user.roles,
    permissions: await deps.roles.permissionsOf(user.roles),
  };
};

/** What a streaming endpoint calls with `?sse_token=`: the caller and its grant, once; INVALID_TOKEN for anything else. */
export const verifySseGrant = async (
  deps: GrantDeps & Pick<IdentityDeps, 'sseTokens' | 'random'>,
  token: string | undefined,
): Promise<{ caller: Caller; grant: SseGrant }> => {
  if (token === undefined || token === '')
    throw new InvalidTokenError('Event streams need ?sse_token= from POST /api/v1/auth/sse-token.');
  const grant = await deps.sseTokens.consumeToken(deps.random.hash(token), deps.clock.now());
  if (grant === undefined)
    throw new InvalidTokenError('The SSE token is unknown, expired or already used: request a new one.');
  const [caller, live] = await Promise.all([callerOf(deps, grant), deps.sseTokens.sessionExists(grant.sessionId)]);
  if (caller === undefined) throw new InvalidTokenError('The credential behind this SSE token is no longer valid.');
  if (!live) throw new InvalidTokenError('The SSE session of this token was ended (a reused refresh token).');
  return { caller, grant };
};

export const verifySseToken = async (deps: IdentityDeps, token: string | undefined): Promise<Caller> =>
  (await verifySseGrant(deps, token)).caller;

/**
 * What an open stream re-checks every few seconds, with two reads side by side: its SSE session was not ended (a
 * reused refresh token ends it), and a user's account is still active and its tokens were not invalidated after the
 * grant (logout, deactivation, password change), or an API key still exists, unrevoked and unexpired. False ends the
 * stream.
 */
export const sseGrantStillValid = async (
  deps: Pick<IdentityDeps, 'users' | 'apiKeys' | 'clock' | 'sseTokens'>,
  grant: SseGrant,
): Promise<boolean> => {
  const [credential, live] = await Promise.all([
    credentialStillValid(deps, grant),
    deps.sseTokens.sessionExists(grant.sessionId),
  ]);
  return credential && live;
};

const credentialStillValid = async (
  deps: Pick<IdentityDeps, 'users' | 'apiKeys' | 'clock'>,
  grant: SseGrant,
): Promise<boolean> => {
  if (grant.kind === 'api_key') {
    const key = grant.apiKeyId === null ? undefined : await deps.apiKeys.get(grant.apiKeyId);
    const now = deps.clock.now().getTime();
    return key !== undefined && key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now);
  }
  const user = await deps.users.get(grant.userId);
  return user !== undefined && user.status === 'active' && grant.sessionStartedAt > user.tokensValidAfter;
};
