// The outbox of terminal transactions: a deployment that ends (success, failed, cancelled, rolled_back) writes,
// in the same transaction as its final state and the freed instance, an entry naming the side effects it still
// owes. They are done right after the transaction, then the entry is removed. A process that dies in between
// leaves the entry: the next pass for the deployment, or the sweep, does them again. Every effect is idempotent
// (a cancel notice is a conditional write, the final event is a keyed append made at most once, a
// dispatcher wake-up means "look at the queue").
import { cancelDeploymentCommands } from '../targets/commands.js';
import type { CommandRepository } from '../targets/ports.js';
import type { Clock } from '../shared/ports.js';
import { commandIdOf } from './decide-pass.js';
import { stateEventKey, type KeyedEventAppender } from './events.js';
import type { WebhookEmitter } from '../webhooks/notify.js';
import type { DeploymentRepository, DispatchQueue, Orchestration } from './ports.js';
import type { Deployment, DeploymentState, OutboxEntry } from './types.js';
import { deploymentDetailView } from './views.js';

/** Outgoing webhooks of deployments: the emitter, and where the record is read when someone listens. */
export interface DeploymentWebhooks {
  readonly emitter: WebhookEmitter;
  readonly deployments: Pick<DeploymentRepository, 'get'>;
}

/** A deployment as a webhook's `data`: the detail the API shows, without the plan (secrets masked). */
export const deploymentData = (d: Deployment) => deploymentDetailView(d, { plan: false });

const TERMINAL_EVENT = {
  success: 'deployment.succeeded',
  failed: 'deployment.failed',
  cancelled: 'deployment.cancelled',
  rolled_back: 'deployment.rolled_back',
} as const satisfies Partial<Record<DeploymentState, string>>;

export interface OutboxDeps {
  readonly orchestration: Pick<Orchestration, 'settled'>;
  readonly dispatch: DispatchQueue;
  readonly commands: CommandRepository;
  readonly clock: Clock;
  /** Where the final state_change goes (once per deployment: keyed `state#<to>`); without it, left to the caller. */
  readonly events?: KeyedEventAppender | undefined;
  /** The terminal webhook event (deployment.succeeded, ...); absent: none. */
  readonly webhooks?: DeploymentWebhooks | undefined;
}

/** The command of the current attempt of each step running in `deployment` (none when its plan cannot be read). */
const runningCommandIds = (deployment: Deployment): string[] =>
  Array.isArray(deployment.plan?.steps)
    ? deployment.plan.steps.filter((s) => s.state === 'running').map((s) => commandIdOf(s.id, s.retryCount + 1))
    : [];

/** What ending `previous` as `next` owes: the agents told to stop (unless it succeeded), the dispatcher woken. */
export const owedBy = (previous: Deployment, next: Deployment): OutboxEntry => ({
  deploymentId: next.id,
  tenantId: next.tenantId,
  at: next.completedAt ?? next.startedAt ?? next.createdAt,
  cancelCommands: next.state !== 'success',
  ...(next.state === 'success' ? {} : { openCommands: runningCommandIds(previous) }),
  wakeDispatcher: true,
  finalEvent: { oldState: previous.state, newState: next.state, message: next.errorMessage ?? 'All steps completed.' },
});

/**
 * The terminal webhook event, owed like the other effects (an entry written before webhooks has no tenant: none).
 * Its id is the type and the deployment: redoing the entry makes no second delivery.
 */
const emitTerminal = async (webhooks: DeploymentWebhooks | undefined, entry: OutboxEntry): Promise<void> => {
  const state = entry.finalEvent?.newState;
  const type = state === undefined ? undefined : TERMINAL_EVENT[state as keyof typeof TERMINAL_EVENT];
  if (webhooks === undefined || type === undefined || entry.tenantId === undefined) return;
  await webhooks.emitter.emit({
    type,
    subject: [entry.deploymentId],
    tenantId: entry.tenantId,
    timestamp: entry.at,
    since: entry.at, // the entry does not keep the creation time: its own time (one more look per deployment)
    data: async () => {
      const deployment = await webhooks.deployments.get(entry.deploymentId);
      return deployment === undefined ? { id: entry.deploymentId, state } : deploymentData(deployment);
    },
  });
};

/** Does the entry's effects (again) and removes it. Throws when one fails: the entry stays for the next try. */
export const settleOutbox = async (deps: OutboxDeps, entry: OutboxEntry): Promise<void> => {
  if (entry.cancelCommands) await cancelDeploymentCommands(deps, entry.deploymentId, entry.openCommands ?? []);
  if (entry.finalEvent !== null && deps.events !== undefined) {
    // Keyed by the state entered: the engine pass that wrote it, a retried pass, the sweep and a cancel may all
    // observe this end; whoever appends first wins and the others add nothing (no second terminal event).
    const { oldState, newState, message } = entry.finalEvent;
    await deps.events.appendOnce(entry.deploymentId, [
      {
        key: stateEventKey(newState),
        events: [
          {
            at: entry.at,
            event: {
              type: 'state_change',
              deployment_id: entry.deploymentId,
              old_state: oldState,
              new_state: newState,
              message,
            },
          },
        ],
      },
    ]);
  }
  if (entry.wakeDispatcher)
    await deps.dispatch.wake(`instance freed by ${entry.finalEvent?.newState ?? 'finished'} ${entry.deploymentId}`);
  await emitTerminal(deps.webhooks, entry);
  await deps.orchestration.settled(entry);
};
