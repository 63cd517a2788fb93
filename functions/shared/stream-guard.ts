// The HTTP side of the stream guard (domain/streams/guard.ts: one lease per open stream among the user's
// STREAMS_PER_USER, and the re-check of the caller): the plain-text 429 for one stream too many, or the 200 event
// stream of what passes, with Node's timer and the Lambda logger.
import { Readable } from 'node:stream';
import {
  claimStreamSlot,
  guardedItems,
  STREAM_GUARD_TIMING,
  type StreamCaller,
  type StreamGuardDeps,
  type StreamGuardTiming,
} from '../../domain/streams/guard.js';
import type { Every, Warn } from '../../domain/streams/ports.js';
import { BASE_HEADERS } from './http.js';
import { logger } from './logger.js';
import { eventStream, sseComment, SSE_HEADERS } from './sse.js';
import type { StreamResult } from './stream.js';

/** Seconds a refused stream is told to wait. */
export const STREAMS_RETRY_SECONDS = 5;

/** Node's interval timer, for the domain's loops. */
export const every: Every = (milliseconds, tick) => {
  const timer = setInterval(tick, milliseconds);
  return () => clearInterval(timer);
};

/** A stream's warning, to the Lambda logger. */
export const warn: Warn = (message, fields) => logger.warn(message, { ...fields });

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

const REVOKED = sseComment('the credential of this stream is no longer valid: stream closed');

/** The 200 event stream of `produce`, guarded; or the 429 when the caller has `limit` streams open. */
export const guardedStream = async (
  guard: StreamGuardDeps | undefined,
  caller: StreamCaller,
  produce: (signal: AbortSignal) => AsyncIterable<string>,
  timing: StreamGuardTiming = STREAM_GUARD_TIMING,
): Promise<StreamResult> => {
  const slot = await claimStreamSlot(guard, caller, timing);
  if (slot === undefined) return tooManyStreams(guard?.limit ?? 0);
  return {
    statusCode: 200,
    headers: SSE_HEADERS,
    body: eventStream((signal) =>
      guardedItems(guard, slot, caller, produce, signal, timing, { every, warn, revokedNotice: REVOKED }),
    ),
  };
};
