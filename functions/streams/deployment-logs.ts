// stream -> openDeploymentLog -> followDeploymentLog (domain/streams: the event store, polled) -> SSE frames
//
// GET /api/v1/deployments/{id}/logs?sse_token=...: the deployment's events as the spec frames them (one `data:`
// line of {event, data}, no `event:` field, `id:` = the event's seq). A ping on open and after every 15 s of
// silence; the store is polled every 100 ms while events flow, backing off to once a second while the deployment is
// quiet (domain/streams/poll-backoff.ts); the stream closes right after the terminal state_change, and ends
// itself (with a `retry:` hint) before the function's 900 s limit so clients reconnect with Last-Event-ID.
import { setTimeout as pause } from 'node:timers/promises';
import * as v from 'valibot';
import type { Deployment } from '../../domain/deployments/types.js';
import {
  EVENT_SEQ,
  followDeploymentLog,
  LOG_STREAM_TIMING,
  openDeploymentLog,
  resumeFrom,
  type LogStreamDeps,
  type LogStreamTiming,
} from '../../domain/streams/deployment-log.js';
import type { Sleep } from '../../domain/streams/ports.js';
import { PathId } from '../shared/schemas.js';
import { sseFrames } from '../shared/sse.js';
import { sseTokenOnly, stream } from '../shared/stream.js';
import { guardedStream, warn } from '../shared/stream-guard.js';
import { logStreamDeps } from '../shared/stream-wiring.js';

const sleep: Sleep = (milliseconds, signal) => pause(milliseconds, undefined, { signal });

/** The SSE frames of one deployment's stream, after seq `from` (domain/streams/deployment-log.ts says when it ends). */
export const deploymentLogFrames = (
  deps: Pick<LogStreamDeps, 'deployments' | 'events' | 'clock'>,
  opened: Deployment,
  from: number,
  signal: AbortSignal,
  timing: LogStreamTiming = LOG_STREAM_TIMING,
  wait: Sleep = sleep,
): AsyncGenerator<string> => sseFrames(followDeploymentLog(deps, opened, from, signal, timing, { wait, warn }));

const LastEventId = v.pipe(
  v.string(),
  v.regex(EVENT_SEQ, 'must be the id of an event (a non-negative integer)'),
  v.transform(Number),
);

const Query = v.object({
  sse_token: v.optional(v.string()),
  last_event_id: v.optional(LastEventId),
});

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
      sseTokenOnly(query.sse_token, headers);
      const from = resumeFrom(headers['last-event-id'], query.last_event_id);
      const { caller, deployment } = await openDeploymentLog(deps(), query.sse_token, params.id);
      return guardedStream(deps().guard, caller, (signal) =>
        deploymentLogFrames(deps(), deployment, from, signal, timing),
      );
    },
  );

export const handler = makeHandler(logStreamDeps);
