// logout: every access and refresh token of the caller issued until now stops working at once.
import type { IdentityDeps } from './deps.js';
import type { Caller } from './types.js';

export const logout = async (
  deps: Pick<IdentityDeps, 'users' | 'clock'>,
  caller: Caller,
): Promise<{ message: string }> => {
  await deps.users.revokeTokens(caller.userId, deps.clock.now());
  return { message: 'Logged out: every session and access token of this account is revoked.' };
};
