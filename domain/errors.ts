// Domain errors: one class per family of the spec's error codes. Each carries the spec's `code` and a `kind`;
// functions/shared/errors.ts maps the kind to an HTTP status in one table. Match with instanceof, never on text.

export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'too_large'
  | 'rate_limited'
  | 'unavailable'
  | 'external'
  | 'misconfigured'
  | 'internal';

export type ErrorDetails = Readonly<Record<string, unknown>>;

export abstract class DomainError extends Error {
  abstract readonly kind: ErrorKind;
  readonly code: string;
  readonly details: ErrorDetails | undefined;
  /** Members the spec puts inside `error` besides code, message and details (the auth rate limit's). */
  readonly extra: ErrorDetails | undefined = undefined;
  /** Response headers that go with this error (Retry-After, ...). */
  readonly headers: Readonly<Record<string, string>> | undefined = undefined;

  constructor(code: string, message: string, details?: ErrorDetails, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/** One problem with one input field; `field` is a dotted path such as `version.script` or `target_tags.0.key`. */
export interface FieldProblem {
  readonly field: string;
  readonly code: 'MISSING_FIELD' | 'VALIDATION_ERROR';
  readonly message: string;
}

export class ValidationError extends DomainError {
  readonly kind = 'invalid' as const;
  readonly fields: readonly FieldProblem[];

  /** MISSING_FIELD when every problem is a missing required field, VALIDATION_ERROR otherwise. */
  constructor(message: string, fields: readonly FieldProblem[] = []) {
    const code =
      fields.length > 0 && fields.every((f) => f.code === 'MISSING_FIELD') ? 'MISSING_FIELD' : 'VALIDATION_ERROR';
    super(code, message, fields.length > 0 ? { fields } : undefined);
    this.fields = fields;
  }

  static field(field: string, message: string): ValidationError {
    return new ValidationError(message, [{ field, code: 'VALIDATION_ERROR', message }]);
  }
}

export class InvalidBodyError extends DomainError {
  readonly kind = 'invalid' as const;
  constructor(message = 'The request body is not valid JSON.') {
    super('INVALID_BODY', message);
  }
}

/** A request body over the documented size: refused before it is parsed, stored or logged (413). */
export class PayloadTooLargeError extends DomainError {
  readonly kind = 'too_large' as const;
  constructor(limitBytes: number, field = 'body') {
    const message = `The request body is larger than ${limitBytes} bytes.`;
    super('VALIDATION_ERROR', message, {
      fields: [{ field, code: 'VALIDATION_ERROR', message }],
      limit_bytes: limitBytes,
    });
  }
}

export class NotFoundError extends DomainError {
  readonly kind = 'not_found' as const;
  constructor(resource: string, id?: string) {
    super('NOT_FOUND', id === undefined ? `${resource} not found.` : `${resource} '${id}' not found.`, {
      resource,
      ...(id === undefined ? {} : { id }),
    });
  }
}

export class RouteNotFoundError extends DomainError {
  readonly kind = 'not_found' as const;
  constructor(method: string, path: string) {
    super('NOT_FOUND', `No endpoint answers ${method} ${path}.`, { method, path });
  }
}

export class ConflictError extends DomainError {
  readonly kind = 'conflict' as const;
  constructor(message: string, details?: ErrorDetails) {
    super('CONFLICT', message, details);
  }
}

/**
 * An Idempotency-Key already used by this caller for another request (another method, path or body): 422 by the
 * IETF draft (draft-ietf-httpapi-idempotency-key-header), code VALIDATION_ERROR (the spec's code for input the
 * service will not take; the status tells it from a malformed body).
 */
export class IdempotencyKeyReusedError extends DomainError {
  readonly kind = 'unprocessable' as const;
  constructor(key: string) {
    super(
      'VALIDATION_ERROR',
      `The Idempotency-Key "${key}" was already used for another request (another method, path or body): use a new key for a new request.`,
      { header: 'Idempotency-Key' },
    );
  }
}

export class ServiceUnavailableError extends DomainError {
  readonly kind = 'unavailable' as const;
  constructor(message: string, details?: ErrorDetails, options?: { cause?: unknown }) {
    super('SERVICE_UNAVAILABLE', message, details, options);
  }
}

/**
 * A service we call on the caller's behalf failed (an identity provider at the sign-in callback, the analysis
 * provider): EXTERNAL_SERVICE_ERROR, 500 by the spec's table, or 503 where an endpoint's own table lists 503 for it
 * (`POST /admin/analysis/test`). The message is a guarded sentence naming what failed and how (not 2xx, timeout,
 * unreachable), never the other side's status, body or headers (docs/security.md, rules 24 and 34).
 */
export class ExternalServiceError extends DomainError {
  readonly kind: 'external' | 'unavailable';
  constructor(message: string, options?: { readonly status?: 500 | 503; readonly cause?: unknown }) {
    super('EXTERNAL_SERVICE_ERROR', message, undefined, { cause: options?.cause });
    this.kind = options?.status === 503 ? 'unavailable' : 'external';
  }
}

/**
 * The service's configuration is missing or invalid (a required setting unset outside the local stage, a malformed
 * value): CONFIGURATION_ERROR, 500, the spec's "server configuration invalid". Not a 503: retrying does not help until
 * an operator fixes the setting. The message names the settings, never their values.
 */
export class ConfigurationError extends DomainError {
  readonly kind = 'misconfigured' as const;
  constructor(message: string, details?: ErrorDetails) {
    super('CONFIGURATION_ERROR', message, details);
  }
}

/** A database call failed. Rendered as a generic 500: the cause is logged, never shown. */
export class DatabaseError extends DomainError {
  readonly kind = 'internal' as const;
  constructor(connection: boolean, options?: { cause?: unknown }) {
    super(
      connection ? 'DATABASE_CONNECTION_ERROR' : 'DATABASE_ERROR',
      connection ? 'The database cannot be reached right now.' : 'A database operation failed.',
      undefined,
      options,
    );
  }
}
