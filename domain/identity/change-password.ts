// changePassword: throttle check -> the caller's user -> current password (a wrong one counts toward the address's
// lockout, as at login) -> the new hash, written only over the hash that was checked -> every earlier session and
// access token revoked -> a new session for the caller (this browser stays signed in, every other one is out).
// A user without a local password (provisioned by an identity provider) has none to change: 409.
import { ConflictError, ValidationError } from '../errors.js';
import { AuthRateLimitError, InvalidCredentialsError } from './errors.js';
import type { IdentityDeps } from './deps.js';
import { startSession, type StartedSession } from './sessions.js';
import type { Caller } from './types.js';
import { closeRevokedViewers } from './viewers.js';

export interface ChangePasswordCommand {
  readonly currentPassword: string;
  readonly newPassword: string;
  readonly ip: string;
}

export const changePassword = async (
  deps: IdentityDeps,
  caller: Caller,
  command: ChangePasswordCommand,
): Promise<StartedSession> => {
  const now = deps.clock.now();
  const lockout = await deps.throttle.check(command.ip, now);
  if (lockout.locked) throw new AuthRateLimitError(lockout.retryAfterSeconds);

  const user = await deps.users.get(caller.userId);
  if (user === undefined || user.status !== 'active') throw new InvalidCredentialsError();
  if (user.passwordHash === null)
    throw new ConflictError('This account signs in through its identity provider and has no password here.');
  if (!(await deps.hasher.verify(user.passwordHash, command.currentPassword))) {
    const state = await deps.throttle.recordFailure(command.ip, now);
    if (state.locked) throw new AuthRateLimitError(state.retryAfterSeconds);
    throw ValidationError.field('current_password', 'is not your current password');
  }
  if (command.newPassword === command.currentPassword)
    throw ValidationError.field('new_password', 'must differ from the current password');

  const hash = await deps.hasher.hash(command.newPassword);
  if (!(await deps.users.setPassword(user.id, hash, user.passwordHash, now)))
    throw new ConflictError('The password was changed (or the sessions ended) meanwhile: sign in again and retry.');
  await closeRevokedViewers(deps, { userId: user.id });
  // Issued after the revocation instant (tokens issued at or before it are revoked).
  const after = new Date(now.getTime() + 1);
  return startSession({ ...deps, clock: { now: () => after } }, user);
};
