// Bounded concurrency: many independent writes (a round's commands, a backfill's entries, a rotation's records) at
// most `limit` in flight, so a large batch does not open a request per item at once.

/**
 * Runs `work` on every item, at most `limit` at once. Every item is tried, also after one failed; then the first
 * failure (if any) is thrown.
 */
export const eachLimited = async <T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> => {
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item).catch((error: unknown) => void (failure ??= { error }));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure !== undefined) throw failure.error;
};
