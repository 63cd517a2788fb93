// Conditional writes: a failed condition (or a cancelled transaction) is an expected answer, not an error.

const CONDITION_FAILED = new Set(['ConditionalCheckFailedException', 'TransactionCanceledException']);

export const isConditionFailure = (error: unknown): boolean => error instanceof Error && CONDITION_FAILED.has(error.name);

/** True when the write happened, false when its condition did not hold; other failures are rethrown. */
export const conditionally = async (write: Promise<unknown>): Promise<boolean> => {
  try {
    await write;
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};
