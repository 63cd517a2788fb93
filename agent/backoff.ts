// Retry delays: 0.5 s doubling up to 15 s, each drawn from the upper half of its step (jitter keeps a fleet of
// agents from retrying in lockstep after a server restart). A server's Retry-After wins when it gives one.

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_MAX_MS = 15_000;
/** A Retry-After longer than this is capped: a wrong header must not park the agent for hours. */
export const RETRY_AFTER_MAX_MS = 300_000;

/** The delay before retry number `attempt` (0 for the first retry). */
export const backoffDelay = (attempt: number, random: () => number = Math.random): number => {
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + (random() * step) / 2);
};

/** Milliseconds from a Retry-After header (seconds or an HTTP date), or undefined when absent or unreadable. */
export const retryAfterMs = (header: string | null | undefined, now: number = Date.now()): number | undefined => {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(RETRY_AFTER_MAX_MS, Math.round(Number(value) * 1000));
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(0, at - now));
};

/** Resolves after `ms`, or at once (without error) when `signal` aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
