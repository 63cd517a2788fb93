// logout: every access and refresh token of the caller issued until now stops working at once, and the live views
// those sessions opened are closed.
import type { IdentityDeps } from './deps.js';
import type { Caller } from './types.js';
import { closeRevokedViewers } from './viewers.js';

export const logout = async (
  deps: Pick<IdentityDeps, 'users' | 'clock' | 'viewers'>,
  caller: Caller,
): Promise<{ message: string }> => {
  await deps.users.revokeTokens(caller.userId, deps.clock.now());
  // The viewer connections of the user's logins (not those an API key opened: the key stays valid).
  await closeRevokedViewers(deps, { userId: caller.userId });
  return { message: 'Logged out: every session and access token of this account is revoked.' };
};
