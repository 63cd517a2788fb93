// Conditional writes: a failed condition (or a cancelled transaction) is an expected answer, not an error.
import { untilBackstop } from '../request-budget.js';
import { isTransientError } from '../transient.js';

const CONDITION_FAILED = new Set(['ConditionalCheckFailedException', 'TransactionCanceledException']);

/** A failed condition; with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` it carries the raw item. */
export const isConditionFailure = (
  error: unknown,
): error is Error & { Item?: Record<string, { N?: string; S?: string } | undefined> } =>
  error instanceof Error && CONDITION_FAILED.has(error.name);

/** The write's answer, or undefined when its condition did not hold; other failures are rethrown. */
export const whenCondition = async <T>(write: Promise<T>): Promise<T | undefined> => {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
};

/** True when the write happened, false when its condition did not hold; other failures are rethrown. */
export const conditionally = async (write: Promise<unknown>): Promise<boolean> =>
  (await whenCondition(write.then(() => true))) ?? false;

const READ_BACK_ATTEMPTS = 4;

/**
 * What is stored after a write whose answer may have been lost (issue 34): a timeout or dropped connection after
 * DynamoDB applied it, or the SDK's own retry of a write that had applied, whose condition then fails on the first
 * attempt's item. Reads the item back (a few times: the read may fail too) and answers it, or undefined when the
 * write did not apply. Unreadable every time: `error`, the write's own failure, is thrown; so is a refusal DynamoDB
 * answered (a 4xx other than a failed condition or a throttle), which certainly did not apply.
 */
export const readBack = async <T>(error: unknown, read: () => Promise<T | undefined>): Promise<T | undefined> => {
  // DynamoDB answered that it refused the write (validation, access, item too large): nothing to read back.
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status !== undefined && status < 500 && !isConditionFailure(error) && !isTransientError(error)) throw error;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await untilBackstop(read);
    } catch {
      if (attempt >= READ_BACK_ATTEMPTS) throw error;
    }
  }
};
