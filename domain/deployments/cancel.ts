// Cancel: a deployment that is not terminal becomes cancelled (reason kept for audit), its waiting steps are
// marked cancelled, its instance is freed in the same transaction, the agents are told to stop its commands, and
// the dispatcher is woken for the next waiting request: those two (and the final event) through the outbox, so a
// crash after the transaction loses none of them (outbox.ts). A terminal deployment answers 409.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import type { CommandRepository } from '../targets/ports.js';
import type { Clock, ServiceMetrics } from '../shared/ports.js';
import type { KeyedEventAppender } from './events.js';
import { owedBy, settleOutbox } from './outbox.js';
import type { DeploymentRepository, DispatchQueue, Orchestration } from './ports.js';
import { TERMINAL_STATES, type Deployment, type PlanStep } from './types.js';
import { deploymentDetailView } from './views.js';

export interface CancelDeps {
  readonly deployments: DeploymentRepository;
  readonly orchestration: Orchestration;
  readonly dispatch: DispatchQueue;
  readonly commands: CommandRepository;
  readonly clock: Clock;
  /** When given, the cancel is recorded as the deployment's terminal state_change (ends its live stream). */
  readonly events?: KeyedEventAppender;
  /** Business metrics: the cancelled deployment's final state. */
  readonly metrics?: ServiceMetrics;
}

export const visibleDeployment = async (
  deps: Pick<CancelDeps, 'deployments'>,
  caller: Caller,
  id: string,
): Promise<Deployment> => {
  const deployment = await deps.deployments.find(id);
  if (deployment === undefined || (caller.tenantId !== null && deployment.tenantId !== caller.tenantId))
    throw new NotFoundError('Deployment', id);
  return deployment;
};

const cancelledStep = (step: PlanStep, at: string): PlanStep =>
  step.state === 'pending' || step.state === 'running'
    ? { ...step, state: 'cancelled', completedAt: step.state === 'running' ? at : step.completedAt }
    : step;

export const cancelDeployment = async (deps: CancelDeps, caller: Caller, id: string, reason: string | undefined) => {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const deployment = await visibleDeployment(deps, caller, id);
    if (TERMINAL_STATES.has(deployment.state)) {
      throw new ConflictError(
        `The deployment is already ${deployment.state}; only a deployment that has not finished can be cancelled.`,
        { state: deployment.state },
      );
    }
    const now = deps.clock.now();
    const at = now.toISOString();
    const next: Deployment = {
      ...deployment,
      state: 'cancelled',
      completedAt: at,
      durationMs: deployment.startedAt === null ? null : now.getTime() - Date.parse(deployment.startedAt),
      cancelReason: reason ?? null,
      errorMessage: reason === undefined ? 'Cancelled by a user.' : `Cancelled by a user: ${reason}`,
      plan: { ...deployment.plan, steps: deployment.plan.steps.map((s) => cancelledStep(s, at)) },
      instanceId: null,
      revision: deployment.revision + 1,
    };
    const owed = owedBy(deployment, next);
    if (await deps.orchestration.finish(deployment, next, owed)) {
      deps.metrics?.deploymentFinished(next.state);
      await settleOutbox(deps, owed);
      return deploymentDetailView(next, { plan: false });
    }
  }
  throw new ConflictError('The deployment kept changing while it was being cancelled; try again.');
};
