// Domain error kind -> HTTP status, in one table, and the spec's envelope {error: {code, message, details}}.
import { DomainError, type ErrorDetails, type ErrorKind } from '../../domain/errors.js';
import { logger } from './logger.js';

export const STATUS_BY_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

export interface ErrorEnvelope {
  readonly error: { readonly code: string; readonly message: string; readonly details?: ErrorDetails; readonly [extra: string]: unknown };
}

export const envelope = (code: string, message: string, details?: ErrorDetails, extra?: ErrorDetails): ErrorEnvelope => ({
  error: { code, message, ...(details === undefined ? {} : { details }), ...extra },
});

export interface RenderedError {
  readonly statusCode: number;
  readonly body: ErrorEnvelope;
  readonly headers?: Readonly<Record<string, string>>;
}

const GENERIC_500 = 'An unexpected error occurred. Quote the request id when reporting it.';

/**
 * Renders any thrown value. Domain errors keep their code; below 500 their message and details are shown.
 * Everything else is logged whole and answered with a generic INTERNAL_ERROR that leaks nothing.
 */
export const renderError = (error: unknown, requestId: string): RenderedError => {
  if (error instanceof DomainError) {
    const statusCode = STATUS_BY_KIND[error.kind];
    if (statusCode < 500) {
      return { statusCode, body: envelope(error.code, error.message, error.details, error.extra), ...(error.headers === undefined ? {} : { headers: error.headers }) };
    }
    logger.error('request failed', { code: error.code, error });
    const message = statusCode === 503 ? error.message : GENERIC_500;
    return { statusCode, body: envelope(error.code, message, { request_id: requestId }) };
  }
  logger.error('unhandled error', { error: error instanceof Error ? error : String(error) });
  return { statusCode: 500, body: envelope('INTERNAL_ERROR', GENERIC_500, { request_id: requestId }) };
};
