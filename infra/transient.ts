// Failures that say nothing about the record being worked on: throttling, a service's own error, a network
// error. The AWS SDK marks the retryable ones; it already retried them, so the caller retries later.
const TRANSIENT_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TransactionConflictException',
  'TimeoutError',
  'AbortError',
]);
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN']);

export const isTransientError = (error: unknown): boolean => {
  if (!(error instanceof Error)) return false;
  const sdk = error as Error & {
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number };
    code?: string;
    CancellationReasons?: { Code?: string }[];
  };
  if (sdk.$retryable !== undefined || TRANSIENT_NAMES.has(error.name) || TRANSIENT_CODES.has(sdk.code ?? ''))
    return true;
  if ((sdk.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  // A transaction cancelled because another one was writing the same items.
  return (sdk.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError');
};
