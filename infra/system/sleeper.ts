import { setTimeout as wait } from 'node:timers/promises';
import type { Sleeper } from '../../domain/targets/ports.js';

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export const systemSleeper: Sleeper = {
  sleep: (ms, signal) =>
    wait(ms, undefined, signal === undefined ? undefined : { signal }).then(
      () => undefined,
      () => undefined,
    ),
};
