// Conditional writes: a failed condition (or a cancelled transaction) is an expected answer, not an error.

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
