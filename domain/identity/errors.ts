// The spec's authentication and authorization errors (api.md, Errors).
import { DomainError, type ErrorDetails } from '../errors.js';

abstract class Unauthenticated extends DomainError {
  readonly kind = 'unauthenticated' as const;
}

/** No Authorization header at all. */
export class MissingAuthHeaderError extends Unauthenticated {
  constructor() {
    super('MISSING_AUTH_HEADER', 'The Authorization header is missing: send `Authorization: Bearer <token>`.');
  }
}

/** An Authorization header with nothing in it. */
export class EmptyAuthHeaderError extends Unauthenticated {
  constructor() {
    super('UNAUTHORIZED', 'The Authorization header is empty: send `Authorization: Bearer <token>`.');
  }
}

export class InvalidAuthHeaderError extends Unauthenticated {
  constructor() {
    super('INVALID_AUTH_HEADER', 'The Authorization header must be `Bearer <token>`.');
  }
}

export class InvalidCredentialsError extends Unauthenticated {
  constructor(message = 'Invalid email or password.') {
    super('INVALID_CREDENTIALS', message);
  }
}

export class TokenExpiredError extends Unauthenticated {
  constructor() {
    super('TOKEN_EXPIRED', 'The access token has expired: refresh it or log in again.');
  }
}

export class InvalidTokenError extends Unauthenticated {
  constructor(message = 'The token is not valid.') {
    super('INVALID_TOKEN', message);
  }
}

abstract class Forbidden extends DomainError {
  readonly kind = 'forbidden' as const;
}

export class TwoFactorRequiredError extends Forbidden {
  constructor() {
    super('TWO_FACTOR_REQUIRED', 'Complete the login with POST /api/v1/auth/2fa/verify first.');
  }
}

export class ForbiddenError extends Forbidden {
  constructor(message: string, details?: ErrorDetails) {
    super('FORBIDDEN', message, details);
  }
}

/** `details.required` names the first permission missing, `details.missing` every one of them. */
export class InsufficientPermissionsError extends Forbidden {
  constructor(permissions: string | readonly string[]) {
    const missing = typeof permissions === 'string' ? [permissions] : [...permissions];
    const message =
      missing.length === 1
        ? `This needs the permission ${missing[0]}.`
        : `This needs the permissions ${missing.join(', ')}.`;
    super('INSUFFICIENT_PERMISSIONS', message, { required: missing[0], missing });
  }
}

const RATE_LIMIT_MESSAGES = {
  too_many_failed_logins: 'Too many failed login attempts from this address.',
  too_many_failed_two_factor_codes: 'Too many wrong two-factor codes for this account.',
  too_many_bad_signatures: 'Too many calls with a wrong signature for this trigger.',
  too_many_key_verifications: 'An encryption key was verified less than an hour ago by this account.',
} as const;

/**
 * Too many failed logins from one address, or wrong two-factor codes for one account: the spec's 429 with
 * `retry_after_secs` and `reason` in `error`.
 */
export class AuthRateLimitError extends DomainError {
  readonly kind = 'rate_limited' as const;
  override readonly extra: ErrorDetails;
  override readonly headers: Readonly<Record<string, string>>;
  constructor(
    readonly retryAfterSeconds: number,
    reason: keyof typeof RATE_LIMIT_MESSAGES = 'too_many_failed_logins',
  ) {
    super('AUTH_RATE_LIMIT_EXCEEDED', `${RATE_LIMIT_MESSAGES[reason]} Try again in ${retryAfterSeconds} s.`);
    this.extra = { retry_after_secs: retryAfterSeconds, reason };
    this.headers = { 'retry-after': String(retryAfterSeconds), 'x-ratelimit-remaining': '0' };
  }
}
