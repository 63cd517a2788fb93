// login: throttle check -> user by email -> password (constant time for unknown emails) -> active account
// -> a pending-2FA token when 2FA is on, else a session. Failed passwords count toward the address's lockout.
// A user without a local password (provisioned by an identity provider) is refused like a wrong password.
import { AuthRateLimitError, InvalidCredentialsError } from './errors.js';
import type { IdentityDeps } from './deps.js';
import { startSession, type StartedSession } from './sessions.js';
import type { User } from './types.js';

export interface LoginCommand {
  readonly email: string;
  readonly password: string;
  readonly ip: string;
}

export type LoginOutcome =
  | ({ readonly kind: 'session' } & StartedSession)
  | { readonly kind: 'two_factor'; readonly body: { readonly requires_2fa: true; readonly pending_token: string } };

/** Who a password proves, or the pending-2FA token to ask for the code: login without the session (the OAuth page). */
export type PasswordOutcome =
  | { readonly kind: 'user'; readonly user: User }
  | { readonly kind: 'two_factor'; readonly body: { readonly requires_2fa: true; readonly pending_token: string } };

export const login = async (deps: IdentityDeps, command: LoginCommand): Promise<LoginOutcome> => {
  const outcome = await checkPassword(deps, command);
  if (outcome.kind === 'two_factor') return outcome;
  return { kind: 'session', ...(await startSession(deps, outcome.user)) };
};

export const checkPassword = async (deps: IdentityDeps, command: LoginCommand): Promise<PasswordOutcome> => {
  const now = deps.clock.now();
  const lockout = await deps.throttle.check(command.ip, now);
  if (lockout.locked) throw new AuthRateLimitError(lockout.retryAfterSeconds);

  const user = await deps.users.findByEmail(command.email);
  const passwordOk =
    user === undefined || user.passwordHash === null
      ? (await deps.hasher.burnTime(command.password), false)
      : await deps.hasher.verify(user.passwordHash, command.password);
  if (user === undefined || !passwordOk) {
    const state = await deps.throttle.recordFailure(command.ip, now);
    if (state.locked) throw new AuthRateLimitError(state.retryAfterSeconds);
    throw new InvalidCredentialsError();
  }
  if (user.status !== 'active')
    throw new InvalidCredentialsError(`This account is ${user.status}: ask an administrator.`);

  if (user.twoFactor.enabled) {
    const pending = await deps.tokens.issue(
      { type: 'two_factor_pending', userId: user.id, tenantId: user.tenantId, issuedAt: now.getTime() },
      deps.settings.twoFactorPendingTtlSeconds,
    );
    return { kind: 'two_factor', body: { requires_2fa: true, pending_token: pending } };
  }
  return { kind: 'user', user };
};
