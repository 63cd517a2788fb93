// end session ("sign out of this browser"): the presented refresh token -> its family revoked. Only this login's
// refresh tokens stop; the user's other sessions keep working. The access token this browser holds is not
// revoked: it lives to its expiry (security.md rule 44), and the console forgets it at once.
import type { IdentityDeps } from './deps.js';

export const endSession = async (
  deps: Pick<IdentityDeps, 'sessions' | 'random' | 'clock'>,
  refreshToken: string | undefined,
): Promise<{ message: string }> => {
  const found =
    refreshToken === undefined || refreshToken === ''
      ? undefined
      : await deps.sessions.find(deps.random.hash(refreshToken));
  if (found === undefined) return { message: 'No session in this browser: nothing to end.' };
  if (!found.familyRevoked) await deps.sessions.revokeFamily(found.familyId, deps.clock.now());
  return { message: 'Signed out of this browser: its refresh token is revoked; other sessions keep working.' };
};
