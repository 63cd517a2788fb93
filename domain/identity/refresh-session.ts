// refresh: the presented token -> its family still valid -> not already rotated (else reuse: the whole family
// is revoked) -> the account still active and not logged out since -> rotate atomically -> new access token.
import { InvalidTokenError } from './errors.js';
import type { IdentityDeps } from './deps.js';
import { accessTokenFor, type StartedSession } from './sessions.js';

const LOG_IN_AGAIN = 'The refresh token is not valid: log in again.';

export const refreshSession = async (deps: IdentityDeps, refreshToken: string | undefined): Promise<StartedSession> => {
  if (refreshToken === undefined || refreshToken === '')
    throw new InvalidTokenError('No refresh token cookie: log in again.');
  const now = deps.clock.now();
  const found = await deps.sessions.find(deps.random.hash(refreshToken));
  if (found === undefined || found.familyRevoked || found.expiresAt <= now.getTime())
    throw new InvalidTokenError(LOG_IN_AGAIN);
  const reused = async () => {
    await deps.sessions.revokeFamily(found.familyId, now);
    return new InvalidTokenError(
      'This refresh token was already used, so every session of that login is now revoked: log in again.',
    );
  };
  if (found.rotated) throw await reused();

  const user = await deps.users.get(found.userId);
  if (user === undefined || user.status !== 'active' || found.issuedAt <= user.tokensValidAfter)
    throw new InvalidTokenError(LOG_IN_AGAIN);

  const nextToken = deps.random.random();
  const refreshExpiresAt = new Date(now.getTime() + deps.settings.refreshTokenTtlSeconds * 1000);
  const rotated = await deps.sessions.rotate(found.tokenHash, {
    tokenHash: deps.random.hash(nextToken),
    userId: user.id,
    familyId: found.familyId,
    issuedAt: now.getTime(),
    expiresAt: refreshExpiresAt.getTime(),
  });
  if (!rotated) throw await reused(); // another request rotated it first
  return { body: await accessTokenFor(deps, user, now), refreshToken: nextToken, refreshExpiresAt };
};
