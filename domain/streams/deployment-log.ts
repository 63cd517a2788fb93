// A deployment's log stream (GET /api/v1/deployments/{id}/logs): what it reads when. It resumes after the event
// a client last saw (Last-Event-ID), polls the event store (every 100 ms while events flow, backing off to twice a
// second while the deployment is quiet, poll-backoff.ts), pings after silence, closes right after the terminal
// state_change (stored once: a finished deployment's whose store has none yet is appended, keyed, by the reader), ends itself before
// the function's time limit, and rides out a few store failures with backoff. The HTTP side frames the items.
import { ValidationError } from '../errors.js';
import { visibleDeployment } from '../deployments/cancel.js';
import {
  ensureStoredEnd,
  isTerminalEvent,
  PING_MESSAGE,
  streamMessage,
  type DeploymentEventStore,
  type KeyedEventAppender,
  type KeyedEventLookup,
} from '../deployments/events.js';
import type { DeploymentRepository } from '../deployments/ports.js';
import { TERMINAL_STATES, type Deployment } from '../deployments/types.js';
import { authorize } from '../identity/authenticate.js';
import type { Clock } from '../shared/ports.js';
import type { StreamCaller, StreamGuardDeps } from './guard.js';
import { backedOff, nextPollMs, type PollBackoff } from './poll-backoff.js';
import { commentItem, failureText, messageItem, retryItem, type PollRuntime, type StreamItem } from './ports.js';

export interface LogStreamDeps {
  /** `?sse_token=` -> the caller, once (the token is single use), with the re-check an open stream repeats. */
  readonly verify: (token: string | undefined) => Promise<StreamCaller>;
  /** Open streams per user and the re-check; absent in tests that do not need them. */
  readonly guard?: StreamGuardDeps;
  readonly deployments: DeploymentRepository;
  readonly events: DeploymentEventStore & KeyedEventAppender & KeyedEventLookup;
  readonly clock: Clock;
}

export interface LogStreamTiming {
  /** How often the store is read for new events while they flow. */
  readonly pollMs: number;
  /** Without a new event for this long, the wait between reads doubles after each empty read... */
  readonly quietAfterMs: number;
  /** ...up to this (the first event after a quiet spell waits at most this long to be read). */
  readonly quietPollMs: number;
  /** A ping after this much silence. */
  readonly pingMs: number;
  /** The stream ends itself after this long (the function may run 900 s). */
  readonly maxMs: number;
  /** The `retry:` hint: how long a client waits before reconnecting. */
  readonly retryMs: number;
  /** How often an idle stream re-reads the deployment (to notice a finish that stored no state_change)... */
  readonly recheckMs: number;
  /** ...and how often once its polls have backed off all the way. */
  readonly quietRecheckMs: number;
  /** How long after a finish without a stored terminal state_change the stream waits before appending it. */
  readonly endGraceMs: number;
}

// An idle stream reads the store twice a second and the deployment every 10 s (was ten reads a second and one every
// 2 s: docs/cost.md, issue 36), once nothing came for 10 s (a deployment's start and the pauses between its steps
// stay fast); the first line after a longer quiet spell waits up to half a second more, the lines after it flow at
// 100 ms. The stream ends itself after 14 minutes, inside the function's 900 s.
export const LOG_STREAM_TIMING: LogStreamTiming = {
  pollMs: 100,
  quietAfterMs: 10_000,
  quietPollMs: 500,
  pingMs: 15_000,
  maxMs: 14 * 60_000,
  retryMs: 2_000,
  recheckMs: 2_000,
  quietRecheckMs: 10_000,
  endGraceMs: 2_000,
};

const backoffOf = (timing: LogStreamTiming): PollBackoff => ({
  fastMs: timing.pollMs,
  quietAfterMs: timing.quietAfterMs,
  maxMs: timing.quietPollMs,
});

/** Events read per store call. */
const PAGE = 500;
/** Consecutive store failures an open stream rides out (with backoff) before it ends and lets the client reconnect. */
const MAX_FAILURES = 5;

/** The id of an event as a client sends it back (the event's seq). */
export const EVENT_SEQ = /^\d{1,10}$/;

/** Where to resume: the Last-Event-ID header (what EventSource sends on reconnect), else `?last_event_id=`, else 0. */
export const resumeFrom = (header: string | undefined, query: number | undefined): number => {
  if (header === undefined || header.trim() === '') return query ?? 0;
  if (!EVENT_SEQ.test(header.trim())) {
    throw new ValidationError('Last-Event-ID must be the id of an event.', [
      { field: 'Last-Event-ID', code: 'VALIDATION_ERROR', message: 'must be a non-negative integer' },
    ]);
  }
  return Number(header.trim());
};

/** The deployment a caller may stream, after its token is verified and its permission checked. */
export const openDeploymentLog = async (
  deps: LogStreamDeps,
  token: string | undefined,
  deploymentId: string,
): Promise<{ readonly caller: StreamCaller; readonly deployment: Deployment }> => {
  const caller = await deps.verify(token);
  authorize(caller, 'deployments:read');
  return { caller, deployment: await visibleDeployment(deps, caller, deploymentId) };
};

/**
 * The end of a finished deployment's stream, once caught up. Its terminal state_change is stored exactly once (its
 * keyed marker says where; when no observer stored it yet, this reader appends it, keyed the same): not sent yet,
 * the stream reads on to it (undefined); already sent (a client resuming after the end), the stream closes.
 */
const finishedEnd = async (
  events: KeyedEventAppender & KeyedEventLookup,
  deployment: Deployment,
  cursor: number,
): Promise<'sent' | undefined> => {
  const end = await ensureStoredEnd(events, deployment);
  return end !== undefined && end.seq <= cursor ? 'sent' : undefined;
};

/**
 * The items of one deployment's stream, after seq `from`. Ends after the terminal state_change, at `timing.maxMs`,
 * after MAX_FAILURES failed reads in a row, or when `signal` aborts.
 */
export async function* followDeploymentLog(
  deps: Pick<LogStreamDeps, 'deployments' | 'events' | 'clock'>,
  opened: Deployment,
  from: number,
  signal: AbortSignal,
  timing: LogStreamTiming,
  runtime: PollRuntime,
): AsyncGenerator<StreamItem> {
  const now = () => deps.clock.now().getTime();
  const started = now();
  let deployment = opened;
  let checkedAt = started;
  let cursor = from;
  let lastWrite = started;
  let changedAt = started;
  const backoff = backoffOf(timing);
  let waitMs = timing.pollMs;
  let failures = 0;
  yield retryItem(timing.retryMs);
  yield messageItem(PING_MESSAGE);
  while (!signal.aborted) {
    try {
      const batch = await deps.events.after(deployment.id, cursor, PAGE);
      failures = 0;
      for (const stored of batch) {
        yield messageItem(streamMessage(stored.event), stored.seq);
        cursor = stored.seq;
        lastWrite = now();
        changedAt = lastWrite;
        if (isTerminalEvent(stored.event)) return;
      }
      if (batch.length === PAGE) continue;
      if (now() - started >= timing.maxMs) {
        yield retryItem(timing.retryMs);
        yield commentItem(
          'this stream ends before the platform limit: reconnect with a new sse_token and Last-Event-ID',
        );
        return;
      }
      if (batch.length === 0) {
        const recheckMs = backedOff(backoff, waitMs) ? timing.quietRecheckMs : timing.recheckMs;
        if (!TERMINAL_STATES.has(deployment.state) && now() - checkedAt >= recheckMs) {
          deployment = (await deps.deployments.get(deployment.id)) ?? deployment;
          checkedAt = now();
        }
        const finishedAt = Date.parse(deployment.completedAt ?? '') || 0;
        if (TERMINAL_STATES.has(deployment.state) && now() - finishedAt >= timing.endGraceMs) {
          if ((await finishedEnd(deps.events, deployment, cursor)) === 'sent') return;
        }
      }
      if (now() - lastWrite >= timing.pingMs) {
        yield messageItem(PING_MESSAGE);
        lastWrite = now();
      }
      waitMs = nextPollMs(backoff, waitMs, now() - changedAt);
      await runtime.wait(waitMs, signal);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      runtime.warn('deployment log stream: store read failed', {
        deployment_id: deployment.id,
        failures,
        error: failureText(error),
      });
      if (failures >= MAX_FAILURES) {
        yield retryItem(timing.retryMs);
        return;
      }
      await runtime.wait(timing.pollMs * 2 ** failures, signal).catch(() => undefined);
    }
  }
}
