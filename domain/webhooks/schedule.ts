// When a failed delivery is tried again: exponential backoff with jitter over about a day. The first attempt is at
// once; after attempt n fails, the next waits RETRY_DELAYS_SECONDS[n - 1] (scaled, +-20 % jitter). Eight attempts in
// all, the last about 20.6 hours after the first (about a day with jitter and queueing).

/** Waits after attempts 1..7: 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h. */
export const RETRY_DELAYS_SECONDS = [10, 60, 300, 1800, 7200, 21_600, 43_200] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
export const JITTER = 0.2;
/** A subscription whose deliveries exhaust every attempt this many times in a row is disabled (configurable). */
export const DISABLE_AFTER_FAILED_DELIVERIES = 5;
/** SQS delays a message at most this long: a longer wait hops (the message is sent again with what remains). */
export const MAX_QUEUE_DELAY_SECONDS = 900;

export interface RetrySchedule {
  /** Multiplies every wait (1 in production; tests run the whole day in seconds). */
  readonly scale: number;
  /** A number in [0, 1) (Math.random in production). */
  readonly random: () => number;
}

/** Milliseconds to wait after attempt `attempt` failed, or undefined when it was the last one of its round. */
export const retryDelayMs = (schedule: RetrySchedule, attempt: number): number | undefined => {
  const base = RETRY_DELAYS_SECONDS[attempt - 1];
  if (base === undefined) return undefined;
  const jitter = 1 + JITTER * (2 * schedule.random() - 1);
  return Math.round(base * 1000 * schedule.scale * jitter);
};

/** The position of an attempt within its round of MAX_ATTEMPTS (a redeliver starts a new round). */
export const attemptInRound = (attempt: number): number => ((attempt - 1) % MAX_ATTEMPTS) + 1;
