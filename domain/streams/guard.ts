// What every event stream goes through once its caller is known: a lease on one of the user's STREAMS_PER_USER
// slots, renewed while the stream runs and released when it ends; and a re-check of the caller every few seconds
// (one read: account status and tokensValidAfter, or the API key), which ends the stream within seconds of logout,
// deactivation or revocation. The HTTP side answers the refusal (a 429) and frames what passes.
import { acquireStreamLease, type StreamLease, type StreamLeaseStore } from '../identity/stream-leases.js';
import type { Caller } from '../identity/types.js';
import type { Clock } from '../shared/ports.js';
import { failureText, type Every, type Warn } from './ports.js';

/** The caller of a stream, with the check an open stream repeats (absent: nothing to re-check). */
export type StreamCaller = Caller & { readonly stillValid?: () => Promise<boolean> };

export interface StreamGuardDeps {
  readonly leases: StreamLeaseStore;
  /** STREAMS_PER_USER. */
  readonly limit: number;
  readonly clock: Clock;
  readonly newLeaseId: () => string;
}

export interface StreamGuardTiming {
  /** How often an open stream re-checks its caller (one read); its lease is renewed only once half its life is gone. */
  readonly recheckMs: number;
  /** How long a lease lasts without renewal (a crashed stream's slot frees itself after this). */
  readonly leaseTtlMs: number;
}

// A re-check every 5 s closes a revoked stream within ~5 s; a renewal every 15 s (half the lease) is 4 writes a
// minute per open stream instead of one per re-check.
export const STREAM_GUARD_TIMING: StreamGuardTiming = { recheckMs: 5_000, leaseTtlMs: 30_000 };

/** A stream let through: its lease (none without a guard). */
export interface StreamSlot {
  readonly lease: StreamLease | undefined;
}

/** A slot for one more stream of the caller; undefined when the caller already has `limit` streams open. */
export const claimStreamSlot = async (
  guard: StreamGuardDeps | undefined,
  caller: StreamCaller,
  timing: StreamGuardTiming,
): Promise<StreamSlot | undefined> => {
  if (guard === undefined) return { lease: undefined };
  const lease = await acquireStreamLease(guard.leases, {
    userId: caller.userId,
    leaseId: guard.newLeaseId(),
    limit: guard.limit,
    ttlMs: timing.leaseTtlMs,
    now: guard.clock.now().getTime(),
  });
  return lease === undefined ? undefined : { lease };
};

/** The runtime of a guarded stream: its re-check timer, its warnings, and what it sends when the caller is revoked. */
export interface GuardRuntime<T> {
  readonly every: Every;
  readonly warn: Warn;
  readonly revokedNotice: T;
}

/**
 * What `produce` yields, until the caller's re-check fails (then `revokedNotice`, unless the client went away) or
 * `signal` aborts; the lease is renewed on the re-checks and released at the end.
 */
export async function* guardedItems<T>(
  guard: StreamGuardDeps | undefined,
  slot: StreamSlot,
  caller: StreamCaller,
  produce: (signal: AbortSignal) => AsyncIterable<T>,
  signal: AbortSignal,
  timing: StreamGuardTiming,
  runtime: GuardRuntime<T>,
): AsyncGenerator<T> {
  const { lease } = slot;
  const inner = new AbortController();
  let revoked = false;
  const stop = () => inner.abort();
  signal.addEventListener('abort', stop);
  let checking = false;
  let renewedAt = guard?.clock.now().getTime() ?? 0;
  const check = async () => {
    try {
      if (caller.stillValid !== undefined && !(await caller.stillValid())) {
        revoked = true;
        inner.abort();
        return;
      }
      const now = guard?.clock.now().getTime() ?? 0;
      if (guard !== undefined && lease !== undefined && now - renewedAt >= timing.leaseTtlMs / 2) {
        await guard.leases.renew(lease, now + timing.leaseTtlMs);
        renewedAt = now;
      }
    } catch (error) {
      // The store cannot answer: the stream goes on; its lease runs out by itself if this lasts.
      runtime.warn('event stream re-check failed', { error: failureText(error) });
    }
  };
  const stopTimer = runtime.every(timing.recheckMs, () => {
    if (checking) return;
    checking = true;
    void check().finally(() => {
      checking = false;
    });
  });
  try {
    for await (const item of produce(inner.signal)) {
      if (revoked) break;
      yield item;
    }
    if (revoked && !signal.aborted) yield runtime.revokedNotice;
  } finally {
    stopTimer();
    signal.removeEventListener('abort', stop);
    if (guard !== undefined && lease !== undefined) await guard.leases.release(lease).catch(() => undefined);
  }
}
