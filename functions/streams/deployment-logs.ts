// stream -> verifySseToken -> visibleDeployment -> DeploymentEventStore (polled)
//
// GET /api/v1/deployments/{id}/logs?sse_token=...: the deployment's events as the spec frames them (one `data:`
// line of {event, data}, no `event:` field, `id:` = the event's seq). A ping on open and after every 15 s of
// silence; the store is polled every 100 ms; the stream closes right after the terminal state_change, and ends
// itself (with a `retry:` hint) before the function's 900 s limit so clients reconnect with Last-Event-ID.
import { setTimeout as pause } from 'node:timers/promises';
import * as v from 'valibot';
import { ValidationError } from '../../domain/errors.js';
import { visibleDeployment } from '../../domain/deployments/cancel.js';
import {
  isTerminalEvent,
  PING_MESSAGE,
  streamMessage,
  synthesizedEnd,
  type DeploymentEventStore,
} from '../../domain/deployments/events.js';
import type { DeploymentRepository } from '../../domain/deployments/ports.js';
import { TERMINAL_STATES, type Deployment } from '../../domain/deployments/types.js';
import { authorize } from '../../domain/identity/authenticate.js';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import type { Clock } from '../../domain/shared/ports.js';
import { logger } from '../shared/logger.js';
import { PathId } from '../shared/schemas.js';
import { sseComment, sseMessage, sseRetry } from '../shared/sse.js';
import { stream } from '../shared/stream.js';
import { guardedStream, type StreamCaller, type StreamGuardDeps } from '../shared/stream-guard.js';
import { logStreamDeps } from '../shared/stream-wiring.js';

/** How many events before the last one a finished stream reads back to find a stored end. */
const END_LOOKBACK = 20;

export interface LogStreamDeps {
  /** `?sse_token=` -> the caller, once (the token is single use), with the re-check an open stream repeats. */
  readonly verify: (token: string | undefined) => Promise<StreamCaller>;
  /** Open streams per user and the re-check; absent in tests that do not need them. */
  readonly guard?: StreamGuardDeps;
  readonly deployments: DeploymentRepository;
  readonly events: DeploymentEventStore;
  readonly clock: Clock;
}

export interface LogStreamTiming {
  /** How often the store is read for new events. */
  readonly pollMs: number;
  /** A ping after this much silence. */
  readonly pingMs: number;
  /** The stream ends itself after this long (the function may run 900 s). */
  readonly maxMs: number;
  /** The `retry:` hint: how long a client waits before reconnecting. */
  readonly retryMs: number;
  /** How often an idle stream re-reads the deployment (to notice a finish that stored no state_change). */
  readonly recheckMs: number;
  /** How long after a finish without a stored terminal state_change the stream waits before building one. */
  readonly endGraceMs: number;
}

export const LOG_STREAM_TIMING: LogStreamTiming = {
  pollMs: 100,
  pingMs: 15_000,
  maxMs: 14 * 60_000,
  retryMs: 2_000,
  recheckMs: 2_000,
  endGraceMs: 2_000,
};

/** Events read per store call. */
const PAGE = 500;
/** Consecutive store failures an open stream rides out (with backoff) before it ends and lets the client reconnect. */
const MAX_FAILURES = 5;

export type Sleep = (milliseconds: number, signal: AbortSignal) => Promise<void>;
const sleep: Sleep = (milliseconds, signal) => pause(milliseconds, undefined, { signal });

/**
 * The frames of one deployment's stream, after seq `from`. Ends after the terminal state_change (stored, or built
 * from a finished deployment's record when the store has none), at `timing.maxMs`, or when `signal` aborts.
 */
export async function* deploymentLogFrames(
  deps: Pick<LogStreamDeps, 'deployments' | 'events' | 'clock'>,
  opened: Deployment,
  from: number,
  signal: AbortSignal,
  timing: LogStreamTiming = LOG_STREAM_TIMING,
  wait: Sleep = sleep,
): AsyncGenerator<string> {
  const now = () => deps.clock.now().getTime();
  const started = now();
  let deployment = opened;
  let checkedAt = started;
  let cursor = from;
  let lastWrite = started;
  let failures = 0;
  yield sseRetry(timing.retryMs);
  yield sseMessage(PING_MESSAGE);
  while (!signal.aborted) {
    try {
      const batch = await deps.events.after(deployment.id, cursor, PAGE);
      failures = 0;
      for (const stored of batch) {
        yield sseMessage(streamMessage(stored.event), stored.seq);
        cursor = stored.seq;
        lastWrite = now();
        if (isTerminalEvent(stored.event)) return;
      }
      if (batch.length === PAGE) continue;
      if (now() - started >= timing.maxMs) {
        yield sseRetry(timing.retryMs);
        yield sseComment(
          'this stream ends before the platform limit: reconnect with a new sse_token and Last-Event-ID',
        );
        return;
      }
      if (batch.length === 0) {
        if (!TERMINAL_STATES.has(deployment.state) && now() - checkedAt >= timing.recheckMs) {
          deployment = (await deps.deployments.get(deployment.id)) ?? deployment;
          checkedAt = now();
        }
        const finishedAt = Date.parse(deployment.completedAt ?? '') || 0;
        if (TERMINAL_STATES.has(deployment.state) && now() - finishedAt >= timing.endGraceMs) {
          const last = await deps.events.last(deployment.id);
          if (last === undefined || last.seq <= cursor) {
            // Caught up with a finished deployment: its stored terminal state_change was already sent (a client
            // resuming after the end), or there is none and the record's is sent now.
            // Events may follow the stored end (a failed command's analysis): the last few are read, so a client
            // resuming after such a line is not sent a second, synthesized end.
            const tail =
              last === undefined || isTerminalEvent(last.event)
                ? []
                : await deps.events.after(deployment.id, Math.max(0, last.seq - END_LOOKBACK), END_LOOKBACK);
            const end = synthesizedEnd(deployment, last, tail);
            if (end !== undefined && end.seq > cursor) yield sseMessage(streamMessage(end.event), end.seq);
            return;
          }
        }
      }
      if (now() - lastWrite >= timing.pingMs) {
        yield sseMessage(PING_MESSAGE);
        lastWrite = now();
      }
      await wait(timing.pollMs, signal);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      logger.warn('deployment log stream: store read failed', {
        deployment_id: deployment.id,
        failures,
        error: error instanceof Error ? error.message : String(error),
      });
      if (failures >= MAX_FAILURES) {
        yield sseRetry(timing.retryMs);
        return;
      }
      await wait(timing.pollMs * 2 ** failures, signal).catch(() => undefined);
    }
  }
}

const SEQ = /^\d{1,10}$/;

const LastEventId = v.pipe(
  v.string(),
  v.regex(SEQ, 'must be the id of an event (a non-negative integer)'),
  v.transform(Number),
);

const Query = v.object({
  sse_token: v.optional(v.string()),
  last_event_id: v.optional(LastEventId),
});

/** Where to resume: the Last-Event-ID header (what EventSource sends on reconnect), else `?last_event_id=`, else 0. */
export const resumeFrom = (header: string | undefined, query: number | undefined): number => {
  if (header === undefined || header.trim() === '') return query ?? 0;
  if (!SEQ.test(header.trim())) {
    throw new ValidationError('Last-Event-ID must be the id of an event.', [
      { field: 'Last-Event-ID', code: 'VALIDATION_ERROR', message: 'must be a non-negative integer' },
    ]);
  }
  return Number(header.trim());
};

export const makeHandler = (deps: () => LogStreamDeps, timing: LogStreamTiming = LOG_STREAM_TIMING) =>
  stream(
    {
      operationId: 'stream_deployment_logs',
      summary: 'The deployment’s events live (Server-Sent Events); ?sse_token= only, Last-Event-ID resumes',
      tags: ['deployments'],
      permission: 'deployments:read',
      params: PathId,
      query: Query,
      responses: {
        200: {
          description:
            'An event stream: one `data:` line of {event, data} per message, `id:` the event’s seq; closes after the terminal state_change',
        },
        401: {
          description:
            'INVALID_TOKEN: no, unknown, expired or used sse_token (the Authorization header is not accepted)',
        },
        403: { description: 'INSUFFICIENT_PERMISSIONS: deployments:read' },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        429: {
          description: 'Plain text, Retry-After: the general rate limit, or STREAMS_PER_USER streams already open',
        },
      },
    },
    async ({ params, query, headers }) => {
      if (query.sse_token === undefined && headers['authorization'] !== undefined) {
        throw new InvalidTokenError(
          'Event streams do not accept the Authorization header: pass ?sse_token= from POST /api/v1/auth/sse-token.',
        );
      }
      const from = resumeFrom(headers['last-event-id'], query.last_event_id);
      const caller = await deps().verify(query.sse_token);
      authorize(caller, 'deployments:read');
      const deployment = await visibleDeployment(deps(), caller, params.id);
      return guardedStream(deps().guard, caller, (signal) =>
        deploymentLogFrames(deps(), deployment, from, signal, timing),
      );
    },
  );

export const handler = makeHandler(logStreamDeps);
