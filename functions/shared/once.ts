/** A value created on first use and reused after: how handlers defer creating real dependencies. */
export const once = <T>(create: () => T): (() => T) => {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = create();
      made = true;
    }
    return value;
  };
};

/**
 * An async value made on first use and shared by concurrent callers; a failure is not kept, so a transient
 * error (DynamoDB throttling, a cold network) is retried by the next call instead of failing the container.
 */
export const onceAsync = <T>(create: () => Promise<T>): (() => Promise<T>) => {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= create().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
};

/**
 * An async value kept for `ttlMs` after it was made, then made again on the next use; concurrent callers share one
 * making, and a failure is not kept. A per-container cache: each container keeps its own for that long.
 */
export const cachedFor = <T>(ttlMs: number, now: () => number, create: () => Promise<T>): (() => Promise<T>) => {
  let pending: Promise<T> | undefined;
  let madeAt = 0;
  return () => {
    if (pending === undefined || now() - madeAt >= ttlMs) {
      madeAt = now();
      const making = create().catch((error: unknown) => {
        if (pending === making) pending = undefined;
        throw error;
      });
      pending = making;
    }
    return pending;
  };
};
