// Two-factor authentication (TOTP, RFC 6238): setup stores a new secret encrypted; enable and disable need a
// current code; verify completes a login that answered requires_2fa. Every accepted code records its time step,
// so no code works twice; wrong codes at verify count toward the address's failed-login lockout.
import { ConflictError, ValidationError } from '../errors.js';
import type { IdentityDeps } from './deps.js';
import { AuthRateLimitError, InvalidCredentialsError, InvalidTokenError } from './errors.js';
import { startSession, type StartedSession } from './sessions.js';
import type { Caller, User } from './types.js';

const contextOf = (user: User) => `totp:${user.id}`;
const invalidCode = () => ValidationError.field('code', 'The code is not valid, or was used already: wait for the next one.');

const userOf = async (deps: IdentityDeps, caller: Caller): Promise<User> => {
  const user = await deps.users.get(caller.userId);
  if (user === undefined) throw new InvalidTokenError('The account of this token no longer exists.');
  return user;
};

/** The step of a valid, unused code of the user's secret, recorded as used; undefined otherwise. */
const useCode = async (deps: IdentityDeps, user: User, code: string): Promise<number | undefined> => {
  if (user.twoFactor.secret === null) return undefined;
  const secret = deps.cipher.decrypt(user.twoFactor.secret, contextOf(user));
  const step = await deps.totp.matchStep(secret, code, deps.clock.now());
  if (step === undefined || (user.twoFactor.lastStep !== null && step <= user.twoFactor.lastStep)) return undefined;
  return (await deps.users.acceptTwoFactorStep(user.id, step)) ? step : undefined;
};

export const setupTwoFactor = async (deps: IdentityDeps, caller: Caller) => {
  const user = await userOf(deps, caller);
  if (user.twoFactor.enabled) throw new ConflictError('Two-factor authentication is already on: disable it first to set up a new secret.');
  const secret = deps.totp.generateSecret();
  const stored = await deps.users.setTwoFactor(
    user.id,
    { enabled: false, secret: deps.cipher.encrypt(secret, contextOf(user)), lastStep: null },
    { enabled: false, lastStep: user.twoFactor.lastStep },
  );
  if (!stored) throw new ConflictError('Two-factor settings changed meanwhile; try again.');
  return { secret, otpauth_url: deps.totp.otpauthUrl(secret, user.email, deps.issuerName) };
};

export const enableTwoFactor = async (deps: IdentityDeps, caller: Caller, code: string) => {
  const user = await userOf(deps, caller);
  if (user.twoFactor.enabled) throw new ConflictError('Two-factor authentication is already on.');
  if (user.twoFactor.secret === null) throw ValidationError.field('code', 'Call POST /api/v1/auth/2fa/setup first.');
  const step = await useCode(deps, user, code);
  if (step === undefined) throw invalidCode();
  const enabled = await deps.users.setTwoFactor(user.id, { enabled: true, secret: user.twoFactor.secret, lastStep: step }, { enabled: false, lastStep: step });
  if (!enabled) throw new ConflictError('Two-factor settings changed meanwhile; try again.');
  return { message: 'Two-factor authentication is on: logins now ask for a code.', two_factor_enabled: true };
};

export const disableTwoFactor = async (deps: IdentityDeps, caller: Caller, code: string) => {
  const user = await userOf(deps, caller);
  if (!user.twoFactor.enabled) throw new ConflictError('Two-factor authentication is not on.');
  const step = await useCode(deps, user, code);
  if (step === undefined) throw invalidCode();
  const disabled = await deps.users.setTwoFactor(user.id, { enabled: false, secret: null, lastStep: null }, { enabled: true, lastStep: step });
  if (!disabled) throw new ConflictError('Two-factor settings changed meanwhile; try again.');
  return { message: 'Two-factor authentication is off.', two_factor_enabled: false };
};

export const verifyTwoFactor = async (deps: IdentityDeps, command: { code: string; pendingToken: string; ip: string }): Promise<StartedSession> => {
  const now = deps.clock.now();
  const lockout = await deps.throttle.check(command.ip, now);
  if (lockout.locked) throw new AuthRateLimitError(lockout.retryAfterSeconds);
  const claims = await deps.tokens.verify(command.pendingToken);
  if (claims.type !== 'two_factor_pending') throw new InvalidTokenError('pending_token is not a pending two-factor token.');
  const user = await deps.users.get(claims.userId);
  if (user === undefined || user.status !== 'active' || !user.twoFactor.enabled || claims.issuedAt <= user.tokensValidAfter) {
    throw new InvalidTokenError('The pending login is no longer valid: log in again.');
  }
  if ((await useCode(deps, user, command.code)) === undefined) {
    const state = await deps.throttle.recordFailure(command.ip, now);
    if (state.locked) throw new AuthRateLimitError(state.retryAfterSeconds);
    throw new InvalidCredentialsError('The code is not valid, or was used already.');
  }
  return startSession(deps, user);
};
