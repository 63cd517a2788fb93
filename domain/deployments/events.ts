// The events of a deployment (api.md "Events"): every log line, progress, step_update and state_change is stored
// once, in order, with a per-deployment sequence 1, 2, 3, ... That store is the single source of the live stream
// (GET /deployments/{id}/logs), the history (logs/history) and, later, the command results.
import { offsetTime } from '../shared/time-format.js';
import type { Deployment, DeploymentState } from './types.js';
import { TERMINAL_STATES } from './types.js';

/** One log entry from a target (the `log` member of a `log` event). */
export interface LogEntry {
  /** ISO 8601, UTC. */
  readonly timestamp: string;
  /** `debug`, `info`, `warn` or `error`. */
  readonly level: string;
  readonly step_id: string | null;
  readonly target_id: string | null;
  readonly target_name: string | null;
  readonly message: string;
  /** Free-form; command output lines carry `{stream: 'stdout' | 'stderr', command_id, ...}`. */
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /** A failed command's diagnosis (domain/analysis), on the log entry that announces it. */
  readonly analysis?: Readonly<Record<string, unknown>> | null;
}

export interface LogEvent {
  readonly type: 'log';
  readonly log: LogEntry;
}

export interface ProgressEvent {
  readonly type: 'progress';
  readonly deployment_id: string;
  /** 0.0 to 1.0. */
  readonly progress: number;
  readonly completed_steps: number;
  readonly total_steps: number;
  readonly message: string;
}

export interface StepUpdateEvent {
  readonly type: 'step_update';
  readonly step_id: string;
  readonly state: string;
  readonly exit_code: number | null;
  readonly error_message: string | null;
  /** The step's output (its tail) when it finished; null while it runs. */
  readonly output: string | null;
}

export interface StateChangeEvent {
  readonly type: 'state_change';
  readonly deployment_id: string;
  readonly old_state: DeploymentState;
  readonly new_state: DeploymentState;
  readonly message: string;
}

/** What a stream message carries in `data` (`data.type` is the message's `event`). */
export type DeploymentEvent = LogEvent | ProgressEvent | StepUpdateEvent | StateChangeEvent;
export type DeploymentEventType = DeploymentEvent['type'];

/** An event to append, with the time it happened (ISO 8601, UTC). */
export interface NewEvent {
  readonly at: string;
  readonly event: DeploymentEvent;
}

/** An event as stored: its place in the deployment's sequence (1, 2, 3, ... without gaps). */
export interface StoredEvent extends NewEvent {
  readonly seq: number;
}

/**
 * The events of every deployment. Appends are serialised per deployment, so seqs are contiguous and a reader
 * never sees seq N+1 committed before N. Adapter: infra/dynamodb/deployment-event-store.ts.
 */
export interface DeploymentEventStore {
  /** Stores the events in the order given, after every event already stored; answers them with their seqs. */
  append(deploymentId: string, events: readonly NewEvent[]): Promise<readonly StoredEvent[]>;
  /** Up to `limit` events with seq > `seq`, in order, without gaps (a reader may stop at a gap and ask again). */
  after(deploymentId: string, seq: number, limit: number): Promise<readonly StoredEvent[]>;
  /** The events at positions offset+1 .. offset+limit (seqs are contiguous from 1, so offset n is seq > n). */
  page(deploymentId: string, offset: number, limit: number): Promise<readonly StoredEvent[]>;
  /** The last stored event, if any. */
  last(deploymentId: string): Promise<StoredEvent | undefined>;
}

/** Events appended at most once: the store keeps `key` with them and skips a group whose key it has. */
export interface KeyedEvents {
  readonly key: string;
  readonly events: readonly NewEvent[];
}

/** The idempotent append (adapter: infra/dynamodb/deployment-event-store.ts). */
export interface KeyedEventAppender {
  /** Appends every group not appended before (each group whole, in one transaction); answers what it stored. */
  appendOnce(deploymentId: string, groups: readonly KeyedEvents[]): Promise<readonly StoredEvent[]>;
}

/**
 * The key of a transition's events (appended at most once, keyed groups): a deployment enters each state once, so
 * `state#<to-state>` names its state_change whoever observes the transition first (the engine pass that wrote it,
 * the outbox settled by a retried pass, the sweep or a cancel); the other events of a pass are keyed by the revision
 * its conditional write produced (`rev#<revision>#<part>`): one write, one revision, one append.
 */
/** Events per revision group (a group and its marker fit one transaction; a fan-out's pass has many step_updates). */
const REVISION_GROUP_EVENTS = 90;

export const stateEventKey = (newState: DeploymentState): string => `state#${newState}`;
export const revisionEventKey = (revision: number, part: number): string => `rev#${revision}#${part}`;

/**
 * A pass's events as keyed groups, in order: each state_change its own group (`state#<to>`), the events between them
 * grouped by the revision written. Appended with `appendOnce`, a retried or concurrent observer adds nothing twice.
 */
export const transitionGroups = (revision: number, events: readonly NewEvent[]): KeyedEvents[] => {
  const groups: KeyedEvents[] = [];
  let run: NewEvent[] = [];
  const flush = () => {
    if (run.length > 0) groups.push({ key: revisionEventKey(revision, groups.length), events: run });
    run = [];
  };
  for (const e of events)
    if (e.event.type === 'state_change') {
      flush();
      groups.push({ key: stateEventKey(e.event.new_state), events: [e] });
    } else {
      run.push(e);
      if (run.length === REVISION_GROUP_EVENTS) flush();
    }
  flush();
  return groups;
};

/**
 * Time moves with the sequence: the events dated no earlier than `after` (the last stored event's time) nor than the
 * event before them (`redate` moves one; by default its `at`). ISO 8601 UTC strings of one form compare as times.
 */
export const forwardInTime = <E extends { readonly at: string }>(
  after: string | undefined,
  events: readonly E[],
  redate: (event: E, at: string) => E = (e, at) => ({ ...e, at }),
): E[] => {
  let last = after ?? '';
  return events.map((e) => {
    if (e.at >= last) {
      last = e.at;
      return e;
    }
    return redate(e, last);
  });
};

/** An event moved to `at`: a log line's own timestamp (what the history shows) moves with it. */
export const redatedEvent = (event: DeploymentEvent, at: string): DeploymentEvent =>
  event.type === 'log' && event.log.timestamp < at ? { ...event, log: { ...event.log, timestamp: at } } : event;

/** Longest text kept in one event (message, output): DynamoDB items are at most 400 KB. */
export const MAX_EVENT_TEXT = 64 * 1024;

const head = (text: string): string =>
  text.length <= MAX_EVENT_TEXT ? text : `${text.slice(0, MAX_EVENT_TEXT - 15)}… [truncated]`;
const tail = (text: string): string =>
  text.length <= MAX_EVENT_TEXT ? text : `[truncated] …${text.slice(-(MAX_EVENT_TEXT - 15))}`;

/** The event with over-long texts cut (messages keep their start, outputs their end). */
export const boundedEvent = (event: DeploymentEvent): DeploymentEvent => {
  switch (event.type) {
    case 'log':
      return { ...event, log: { ...event.log, message: head(event.log.message) } };
    case 'step_update':
      return {
        ...event,
        error_message: event.error_message === null ? null : head(event.error_message),
        output: event.output === null ? null : tail(event.output),
      };
    default:
      return { ...event, message: head(event.message) };
  }
};

/** The spec's stream message: `{event, data}` with `data.type === event`. */
export const streamMessage = (event: DeploymentEvent): { event: DeploymentEventType; data: DeploymentEvent } => ({
  event: event.type,
  // A `log` member is a log record: its timestamp takes the spec's `+00:00` form (stored with `Z`).
  data: event.type === 'log' ? { ...event, log: { ...event.log, timestamp: offsetTime(event.log.timestamp) } } : event,
});

export const PING_MESSAGE = { event: 'ping', data: { type: 'ping' } } as const;

/** The state_change that ends a deployment's stream (new_state success, failed, cancelled or rolled_back). */
export const isTerminalEvent = (event: DeploymentEvent): event is StateChangeEvent =>
  event.type === 'state_change' && TERMINAL_STATES.has(event.new_state);

/**
 * The final state_change of a finished deployment as its record tells it (its state, its error or the outbox's
 * "All steps completed."): what an observer appends when no one has yet. Undefined while it is not terminal.
 */
export const finalStateChange = (deployment: Deployment): NewEvent | undefined =>
  TERMINAL_STATES.has(deployment.state)
    ? {
        at: deployment.completedAt ?? deployment.startedAt ?? deployment.createdAt,
        event: {
          type: 'state_change',
          deployment_id: deployment.id,
          old_state: deployment.startedAt === null ? 'pending' : 'running',
          new_state: deployment.state,
          message:
            deployment.errorMessage ??
            (deployment.state === 'success' ? 'All steps completed.' : `Deployment ${deployment.state}.`),
        },
      }
    : undefined;

/** Where a keyed group starts, if it was appended (adapter: its marker's first seq, one read). */
export interface KeyedEventLookup {
  keyedSeq(deploymentId: string, key: string): Promise<number | undefined>;
}

/**
 * The stored end of a finished deployment, appended now if no observer has: the log readers are observers too. The
 * end is keyed `state#<terminal>` like the engine's, the outbox's and the sweep's, so whoever appends first wins and
 * the store holds exactly one terminal state_change (no reader makes one up beside it). Answers its seq, and the
 * event when this call appended it; undefined while the deployment is not terminal.
 */
export const ensureStoredEnd = async (
  events: KeyedEventAppender & KeyedEventLookup,
  deployment: Deployment,
): Promise<{ readonly seq: number; readonly appended: StoredEvent | undefined } | undefined> => {
  const end = finalStateChange(deployment);
  if (end === undefined) return undefined;
  const key = stateEventKey(deployment.state);
  const known = await events.keyedSeq(deployment.id, key);
  if (known !== undefined) return { seq: known, appended: undefined };
  const appended = (await events.appendOnce(deployment.id, [{ key, events: [end] }])).find((e) =>
    isTerminalEvent(e.event),
  );
  if (appended !== undefined) return { seq: appended.seq, appended };
  // Another observer's append won between the read and ours: its marker says where.
  const seq = await events.keyedSeq(deployment.id, key);
  if (seq === undefined) throw new Error(`the end of deployment ${deployment.id} is neither stored nor appendable`);
  return { seq, appended: undefined };
};

/** The events of `page` that follow `seq` without a gap (a reader never skips a seq it has not seen). */
export const contiguousAfter = (seq: number, page: readonly StoredEvent[]): readonly StoredEvent[] => {
  const out: StoredEvent[] = [];
  let next = seq + 1;
  for (const event of page) {
    if (event.seq !== next) break;
    out.push(event);
    next += 1;
  }
  return out;
};
