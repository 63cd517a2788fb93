// Two-factor authentication (TOTP, RFC 6238): setup stores a new secret encrypted; enable and disable need a
// current code; verify completes a login that answered requires_2fa. Every accepted code records its time step,
// so no code works twice; wrong codes at verify count toward the address's failed-login lockout.
//
// Codes cannot be brute-forced. Each attempt is counted before its code is checked, so concurrent guesses never
// get past the limits: a pending token allows settings.twoFactorCodesPerToken attempts and one success (then 401
// INVALID_TOKEN); each user allows the two-factor throttle's maximum of wrong codes in its window, across pending
// tokens, enable and disable, then is locked out of code attempts (429 AUTH_RATE_LIMIT_EXCEEDED, reason
// too_many_failed_two_factor_codes). A right code takes its user attempt back.
//
// Recovery codes (recovery-codes.ts) are issued with enable and replaced by regenerateRecoveryCodes; disable drops
// them. At sign-in (checkTwoFactor) one works instead of a TOTP code, once (a conditional removal), under the same
// attempt limits. Enable, disable and regenerate take only the authenticator's code: whoever holds a session and one
// recovery code must not be able to turn 2FA off or mint a fresh set of codes.
import { ConflictError, ValidationError } from '../errors.js';
import type { IdentityDeps } from './deps.js';
import { requireUserSession } from './delegation.js';
import { AuthRateLimitError, InvalidCredentialsError, InvalidTokenError } from './errors.js';
import { issueRecoveryCodes, normalizeRecoveryCode, recoveryCodeHash } from './recovery-codes.js';
import { startSession, type StartedSession } from './sessions.js';
import type { Caller, User } from './types.js';

/** The SecretCipher context of a user's TOTP secret (also read by domain/encryption/fields.ts). */
export const twoFactorContext = (userId: string) => `totp:${userId}`;
const contextOf = (user: User) => twoFactorContext(user.id);
const invalidCode = () =>
  ValidationError.field('code', 'The code is not valid, or was used already: wait for the next one.');

const userOf = async (deps: IdentityDeps, caller: Caller): Promise<User> => {
  const user = await deps.users.get(caller.userId);
  if (user === undefined) throw new InvalidTokenError('The account of this token no longer exists.');
  return user;
};

/** The step of a valid, unused code of the user's secret, recorded as used; undefined otherwise. */
const matchCode = async (deps: IdentityDeps, user: User, code: string): Promise<number | undefined> => {
  if (user.twoFactor.secret === null) return undefined;
  const secret = deps.cipher.decrypt(user.twoFactor.secret, contextOf(user));
  const step = await deps.totp.matchStep(secret, code, deps.clock.now());
  if (step === undefined || (user.twoFactor.lastStep !== null && step <= user.twoFactor.lastStep)) return undefined;
  return (await deps.users.acceptTwoFactorStep(user.id, step)) ? step : undefined;
};

/** True when `code` is one of the user's unused recovery codes, now removed (used); undefined otherwise. */
const matchRecoveryCode = async (deps: IdentityDeps, user: User, code: string): Promise<true | undefined> => {
  const normalized = normalizeRecoveryCode(code);
  if (normalized === undefined || !user.twoFactor.enabled) return undefined;
  const hash = recoveryCodeHash(deps.random, user.id, normalized);
  if (!(user.twoFactor.recoveryCodes ?? []).includes(hash)) return undefined;
  return (await deps.users.useRecoveryCode(user.id, hash)) ? true : undefined;
};

/** A match within the user's attempt limit: 429 while locked out or for the attempt that crosses the limit. */
const throttled = async <T>(deps: IdentityDeps, user: User, match: () => Promise<T | undefined>) => {
  const now = deps.clock.now();
  const lockout = await deps.twoFactorThrottle.check(user.id, now);
  if (lockout.locked) throw new AuthRateLimitError(lockout.retryAfterSeconds, 'too_many_failed_two_factor_codes');
  const attempt = await deps.twoFactorThrottle.recordFailure(user.id, now);
  if (attempt.locked) throw new AuthRateLimitError(attempt.retryAfterSeconds, 'too_many_failed_two_factor_codes');
  const matched = await match();
  if (matched !== undefined) await deps.twoFactorThrottle.release(user.id, now);
  return matched;
};

/** An authenticator code within the attempt limit (enable, disable, regenerate: no recovery codes there). */
const useCode = (deps: IdentityDeps, user: User, code: string): Promise<number | undefined> =>
  throttled(deps, user, () => matchCode(deps, user, code));

/** A sign-in code: six digits are an authenticator code, anything else is tried as a recovery code. */
const useSignInCode = (deps: IdentityDeps, user: User, code: string): Promise<number | true | undefined> =>
  throttled<number | true>(deps, user, () =>
    /^\d{6}$/.test(code.trim()) ? matchCode(deps, user, code.trim()) : matchRecoveryCode(deps, user, code),
  );

export const setupTwoFactor = async (deps: IdentityDeps, caller: Caller) => {
  const user = await userOf(deps, caller);
  if (user.twoFactor.enabled)
    throw new ConflictError('Two-factor authentication is already on: disable it first to set up a new secret.');
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
  const recovery = issueRecoveryCodes(deps.random, user.id);
  const enabled = await deps.users.setTwoFactor(
    user.id,
    { enabled: true, secret: user.twoFactor.secret, lastStep: step, recoveryCodes: recovery.hashes },
    { enabled: false, lastStep: step },
  );
  if (!enabled) throw new ConflictError('Two-factor settings changed meanwhile; try again.');
  return {
    message:
      'Two-factor authentication is on: logins now ask for a code. Keep the recovery codes somewhere safe: each signs in once without the authenticator, and they are shown only now.',
    two_factor_enabled: true,
    recovery_codes: recovery.codes,
  };
};

/** New recovery codes for a current authenticator code: every earlier one stops working; answered only now. */
export const regenerateRecoveryCodes = async (deps: IdentityDeps, caller: Caller, code: string) => {
  requireUserSession(caller, 'Replacing recovery codes');
  const user = await userOf(deps, caller);
  if (!user.twoFactor.enabled)
    throw new ConflictError('Two-factor authentication is not on: recovery codes come with it.');
  const step = await useCode(deps, user, code);
  if (step === undefined) throw invalidCode();
  const recovery = issueRecoveryCodes(deps.random, user.id);
  const replaced = await deps.users.setTwoFactor(
    user.id,
    { enabled: true, secret: user.twoFactor.secret, lastStep: step, recoveryCodes: recovery.hashes },
    { enabled: true, lastStep: step },
  );
  if (!replaced) throw new ConflictError('Two-factor settings changed meanwhile; try again.');
  return {
    message: 'New recovery codes: the earlier ones no longer work. Keep these somewhere safe; they are shown only now.',
    recovery_codes: recovery.codes,
  };
};

export const disableTwoFactor = async (deps: IdentityDeps, caller: Caller, code: string) => {
  const user = await userOf(deps, caller);
  if (!user.twoFactor.enabled) throw new ConflictError('Two-factor authentication is not on.');
  const step = await useCode(deps, user, code);
  if (step === undefined) throw invalidCode();
  const disabled = await deps.users.setTwoFactor(
    user.id,
    { enabled: false, secret: null, lastStep: null, recoveryCodes: [] },
    { enabled: true, lastStep: step },
  );
  if (!disabled) throw new ConflictError('Two-factor settings changed meanwhile; try again.');
  return { message: 'Two-factor authentication is off.', two_factor_enabled: false };
};

export const verifyTwoFactor = async (
  deps: IdentityDeps,
  command: { code: string; pendingToken: string; ip: string },
): Promise<StartedSession> => startSession(deps, await checkTwoFactor(deps, command));

/**
 * The user a pending-2FA token and a right code, or an unused recovery code, prove (verifyTwoFactor without the
 * session: the OAuth page).
 */
export const checkTwoFactor = async (
  deps: IdentityDeps,
  command: { code: string; pendingToken: string; ip: string },
): Promise<User> => {
  const now = deps.clock.now();
  const lockout = await deps.throttle.check(command.ip, now);
  if (lockout.locked) throw new AuthRateLimitError(lockout.retryAfterSeconds);
  const claims = await deps.tokens.verify(command.pendingToken);
  if (claims.type !== 'two_factor_pending')
    throw new InvalidTokenError('pending_token is not a pending two-factor token.');
  const user = await deps.users.get(claims.userId);
  if (
    user === undefined ||
    user.status !== 'active' ||
    !user.twoFactor.enabled ||
    claims.issuedAt <= user.tokensValidAfter
  ) {
    throw new InvalidTokenError('The pending login is no longer valid: log in again.');
  }
  const pending = deps.random.hash(command.pendingToken);
  const expiresAt = new Date(claims.issuedAt + deps.settings.twoFactorPendingTtlSeconds * 1000);
  const spent = new InvalidTokenError(
    'This pending login is used up (a right code, or too many wrong ones): log in again.',
  );
  if (!(await deps.pendingTwoFactor.reserve(pending, deps.settings.twoFactorCodesPerToken, expiresAt))) throw spent;
  if ((await useSignInCode(deps, user, command.code)) === undefined) {
    const state = await deps.throttle.recordFailure(command.ip, now);
    if (state.locked) throw new AuthRateLimitError(state.retryAfterSeconds);
    throw new InvalidCredentialsError('The code is not valid, or was used already.');
  }
  if (!(await deps.pendingTwoFactor.consume(pending))) throw spent;
  return user;
};
