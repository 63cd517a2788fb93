// How long a polling live stream waits before its next read: fast while things change, then, once nothing has
// changed for a while, twice as long after each empty read up to a cap; fast again from the first change. An idle
// SSE stream then reads its store about once a second instead of ten times, and a burst still flows at the fast
// pace after its first item (docs/cost.md, issue 36).

export interface PollBackoff {
  /** The wait while things change, and right after the first change that ends a quiet spell. */
  readonly fastMs: number;
  /** How long without a change before the wait starts to grow. */
  readonly quietAfterMs: number;
  /** The longest wait: what the first change after a long quiet spell may wait before it is read. */
  readonly maxMs: number;
}

/** The wait before the next read, given the last wait and how long nothing has changed (0: a read just found one). */
export const nextPollMs = (backoff: PollBackoff, lastWaitMs: number, quietForMs: number): number =>
  quietForMs < backoff.quietAfterMs
    ? backoff.fastMs
    : Math.min(backoff.maxMs, Math.max(backoff.fastMs, lastWaitMs * 2));

/** Whether a stream has backed off all the way (its slower re-checks apply then). */
export const backedOff = (backoff: PollBackoff, waitMs: number): boolean => waitMs >= backoff.maxMs;
