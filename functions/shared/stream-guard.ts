// What every event stream goes through once its caller is known: a lease on one of the user's STREAMS_PER_USER
// slots (the next stream answers the general limiter's plain-text 429), renewed while the stream runs and
// released when it ends; and a re-check of the caller every few seconds (one read: account status and
// tokensValidAfter, or the API key), which ends the stream within seconds of logout, deactivation or revocation.
import { Readable } from 'node:stream';
import type { Caller } from '../../domain/identity/types.js';
import { acquireStreamLease, type StreamLease, type StreamLeaseStore } from '../../domain/identity/stream-leases.js';
import type { Clock } from '../../domain/shared/ports.js';
import { BASE_HEADERS } from './http.js';
import { logger } from './logger.js';
import { eventStream, sseComment, SSE_HEADERS } from './sse.js';
import type { StreamResult } from './stream.js';

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

/** Seconds a refused stream is told to wait. */
export const STREAMS_RETRY_SECONDS = 5;

/** The spec's plain-text 429 convention (the general limiter's), for one stream too many. */
const tooManyStreams = (limit: number): StreamResult => ({
  statusCode: 429,
  headers: {
    ...BASE_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'retry-after': String(STREAMS_RETRY_SECONDS),
    'x-ratelimit-remaining': '0',
  },
  body: Readable.from([
    `Too Many Requests: at most ${limit} event streams may be open at once per user; close one and retry.`,
  ]),
});

/** The 200 event stream of `produce`, guarded; or the 429 when the caller has `limit` streams open. */
export const guardedStream = async (
  guard: StreamGuardDeps | undefined,
  caller: StreamCaller,
  produce: (signal: AbortSignal) => AsyncIterable<string>,
  timing: StreamGuardTiming = STREAM_GUARD_TIMING,
): Promise<StreamResult> => {
  let lease: StreamLease | undefined;
  if (guard !== undefined) {
    const now = guard.clock.now().getTime();
    lease = await acquireStreamLease(guard.leases, {
      userId: caller.userId,
      leaseId: guard.newLeaseId(),
      limit: guard.limit,
      ttlMs: timing.leaseTtlMs,
      now,
    });
    if (lease === undefined) return tooManyStreams(guard.limit);
  }
  return {
    statusCode: 200,
    headers: SSE_HEADERS,
    body: eventStream((signal) => guardedFrames(guard, lease, caller, produce, signal, timing)),
  };
};

async function* guardedFrames(
  guard: StreamGuardDeps | undefined,
  lease: StreamLease | undefined,
  caller: StreamCaller,
  produce: (signal: AbortSignal) => AsyncIterable<string>,
  signal: AbortSignal,
  timing: StreamGuardTiming,
): AsyncGenerator<string> {
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
      logger.warn('event stream re-check failed', { error: error instanceof Error ? error.message : String(error) });
    }
  };
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void check().finally(() => {
      checking = false;
    });
  }, timing.recheckMs);
  try {
    for await (const frame of produce(inner.signal)) {
      if (revoked) break;
      yield frame;
    }
    if (revoked && !signal.aborted) yield sseComment('the credential of this stream is no longer valid: stream closed');
  } finally {
    clearInterval(timer);
    signal.removeEventListener('abort', stop);
    if (guard !== undefined && lease !== undefined) await guard.leases.release(lease).catch(() => undefined);
  }
}
