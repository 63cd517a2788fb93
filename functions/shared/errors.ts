// Domain error kind -> HTTP status, in one table, and the spec's envelope {error: {code, message, details}}.
import { DomainError, type ErrorDetails, type ErrorKind } from '../../domain/errors.js';
import { logger } from './logger.js';

export const STATUS_BY_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  external: 500,
  misconfigured: 500,
  internal: 500,
};

export interface ErrorEnvelope {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly details?: ErrorDetails;
    readonly [extra: string]: unknown;
  };
}

export const envelope = (
  code: string,
  message: string,
  details?: ErrorDetails,
  extra?: ErrorDetails,
): ErrorEnvelope => ({
  error: { code, message, ...(details === undefined ? {} : { details }), ...extra },
});

export interface RenderedError {
  readonly statusCode: number;
  readonly body: ErrorEnvelope;
  readonly headers?: Readonly<Record<string, string>>;
}

const GENERIC_500 = 'An unexpected error occurred. Quote the request id when reporting it.';

/**
 * DynamoDB (and SDK) errors that mean "too much at once, try again shortly": answered 503 SERVICE_UNAVAILABLE
 * with Retry-After: 1 instead of a 500. The SDK has already retried them (its standard retry mode) when they
 * reach us; a TransactionCanceledException counts when one of its reasons is a conflict or throttling.
 */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'TransactionInProgressException',
  'LimitExceededException',
]);
const THROTTLING_REASONS = new Set([
  'TransactionConflict',
  'ProvisionedThroughputExceeded',
  'ThrottlingError',
  'RequestLimitExceeded',
]);

export const isThrottling = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  if (THROTTLING.has(error.name)) return true;
  if (error.name !== 'TransactionCanceledException') return false;
  const reasons =
    (error as { CancellationReasons?: readonly ({ Code?: string } | undefined)[] }).CancellationReasons ?? [];
  return (
    reasons.some((r) => r?.Code !== undefined && THROTTLING_REASONS.has(r.Code)) &&
    !reasons.some((r) => r?.Code === 'ConditionalCheckFailed')
  );
};

export const RETRY_SOON = 'The service is busy; retry in a second.';

/**
 * Renders any thrown value. Domain errors keep their code; below 500 their message and details are shown, from 500
 * on their message unless the kind is `internal`, and `details.request_id` only.
 * Everything else is logged whole and answered with a generic INTERNAL_ERROR that leaks nothing.
 */
export const renderError = (error: unknown, requestId: string): RenderedError => {
  if (isThrottling(error) || (error instanceof DomainError && error.kind === 'internal' && isThrottling(error.cause))) {
    logger.warn('throttled', { error: error instanceof Error ? error.name : String(error) });
    return {
      statusCode: 503,
      body: envelope('SERVICE_UNAVAILABLE', RETRY_SOON, { request_id: requestId }),
      headers: { 'retry-after': '1' },
    };
  }
  if (error instanceof DomainError) {
    const statusCode = STATUS_BY_KIND[error.kind];
    if (statusCode < 500) {
      return {
        statusCode,
        body: envelope(error.code, error.message, error.details, error.extra),
        ...(error.headers === undefined ? {} : { headers: error.headers }),
      };
    }
    logger.error('request failed', { code: error.code, error });
    // Only an unexpected failure (a database call) hides its message: 503s, external services and configuration
    // errors say what failed in a sentence made for clients (no upstream text, no value of a setting).
    const message = error.kind === 'internal' ? GENERIC_500 : error.message;
    return {
      statusCode,
      body: envelope(error.code, message, { request_id: requestId }),
      ...(error.headers === undefined ? {} : { headers: error.headers }),
    };
  }
  logger.error('unhandled error', { error: error instanceof Error ? error : String(error) });
  return { statusCode: 500, body: envelope('INTERNAL_ERROR', GENERIC_500, { request_id: requestId }) };
};
