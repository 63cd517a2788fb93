// The history of a deployment (GET /deployments/{id}/logs/history): its stored events as the spec's Historical
// log entries, chronological (in seq order), paged by offset/limit. A finished deployment whose store holds no
// terminal state_change yet (END_GRACE_MS after its end) gets it appended, keyed as every observer appends it, so
// the store and every reader hold exactly one end.
import { offsetTime } from '../shared/time-format.js';
import type { Caller } from '../identity/types.js';
import { visibleDeployment } from './cancel.js';
import type { Clock } from '../shared/ports.js';
import {
  ensureStoredEnd,
  isTerminalEvent,
  type DeploymentEventStore,
  type KeyedEventAppender,
  type KeyedEventLookup,
  type StoredEvent,
} from './events.js';
import type { DeploymentRepository } from './ports.js';
import type { Deployment, DeploymentState } from './types.js';

export interface LogHistoryDeps {
  readonly deployments: DeploymentRepository;
  readonly events: DeploymentEventStore & KeyedEventAppender & KeyedEventLookup;
  readonly clock: Clock;
}

/**
 * How long after its end a deployment's final state_change is left to the engine (its pass appends it with the
 * step events before it) before a reader appends it itself (a process died between the record and the events).
 */
export const END_GRACE_MS = 5_000;

export const HISTORY_DEFAULT_LIMIT = 100;

export interface HistoryEntry {
  readonly id: string;
  readonly seq: number;
  readonly timestamp: string;
  readonly level: string;
  readonly event_type: string;
  readonly step_id: string | null;
  readonly target_id: string | null;
  readonly target_name: string | null;
  readonly message: string | null;
  readonly stdout: string | null;
  readonly stderr: string | null;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  readonly analysis: Readonly<Record<string, unknown>> | null;
}

export { offsetTime };

const stateLevel = (state: DeploymentState | string): string =>
  state === 'failed'
    ? 'error'
    : state === 'cancelled' || state === 'rolled_back' || state === 'rolling_back'
      ? 'warn'
      : 'info';

const stepTarget = (deployment: Deployment, stepId: string) => deployment.plan.steps.find((s) => s.id === stepId);

/** One stored event as a history entry (see docs/decisions.md "Events and logs" for the mapping). */
export const historyEntry = (deployment: Deployment, stored: StoredEvent): HistoryEntry => {
  const base = {
    id: `${deployment.id}:${stored.seq}`,
    seq: stored.seq,
    timestamp: offsetTime(stored.at),
    event_type: stored.event.type,
    analysis: null,
  };
  const event = stored.event;
  switch (event.type) {
    case 'log': {
      const stream = event.log.metadata?.['stream'];
      return {
        ...base,
        timestamp: offsetTime(event.log.timestamp),
        level: event.log.level,
        step_id: event.log.step_id,
        target_id: event.log.target_id,
        target_name: event.log.target_name,
        message: event.log.message,
        stdout: stream === 'stdout' ? event.log.message : null,
        stderr: stream === 'stderr' ? event.log.message : null,
        metadata: event.log.metadata,
        analysis: event.log.analysis ?? null,
      };
    }
    case 'step_update': {
      const step = stepTarget(deployment, event.step_id);
      const what = step === undefined ? `Step ${event.step_id}` : `Step ${step.actionName} on ${step.targetName}`;
      const exit = event.exit_code === null ? '' : ` (exit code ${event.exit_code})`;
      return {
        ...base,
        level: event.state === 'failed' ? 'error' : event.state === 'cancelled' ? 'warn' : 'info',
        step_id: event.step_id,
        target_id: step?.targetId ?? null,
        target_name: step?.targetName ?? null,
        message: `${what} ${event.state}${exit}${event.error_message === null ? '' : `: ${event.error_message}`}`,
        stdout: event.output,
        stderr: null,
        metadata: { state: event.state, exit_code: event.exit_code, error_message: event.error_message },
      };
    }
    case 'state_change':
      return {
        ...base,
        level: stateLevel(event.new_state),
        step_id: null,
        target_id: null,
        target_name: null,
        message: event.message,
        stdout: null,
        stderr: null,
        metadata: { old_state: event.old_state, new_state: event.new_state },
      };
    case 'progress':
      return {
        ...base,
        level: 'info',
        step_id: null,
        target_id: null,
        target_name: null,
        message: event.message,
        stdout: null,
        stderr: null,
        metadata: { progress: event.progress, completed_steps: event.completed_steps, total_steps: event.total_steps },
      };
  }
};

export const deploymentLogHistory = async (
  deps: LogHistoryDeps,
  caller: Caller,
  id: string,
  page: { readonly offset: number; readonly limit: number },
): Promise<readonly HistoryEntry[]> => {
  const deployment = await visibleDeployment(deps, caller, id);
  const events = [...(await deps.events.page(deployment.id, page.offset, page.limit))];
  const finished = Date.parse(deployment.completedAt ?? '') || 0;
  if (
    events.length < page.limit &&
    !events.some((e) => isTerminalEvent(e.event)) &&
    deps.clock.now().getTime() - finished >= END_GRACE_MS
  ) {
    // The end of the store is on this page: a finished deployment's end is stored (once) before it is shown.
    // Stored now (by this read or another observer) after the page was read: the page reads on to it.
    const end = await ensureStoredEnd(deps.events, deployment);
    const lastSeq = events.at(-1)?.seq ?? page.offset;
    if (end !== undefined && end.seq > lastSeq)
      events.push(...(await deps.events.after(deployment.id, lastSeq, page.limit - events.length)));
  }
  return events.map((e) => historyEntry(deployment, e));
};
