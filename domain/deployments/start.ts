// Starting deployments: a create (or redeploy, or dispatch) becomes a running deployment holding an orchestration
// instance, or, when none is free, a pending dispatch request the dispatcher starts later (decisions.md section 7).
import type { Clock, IdGenerator, ServiceMetrics } from '../shared/ports.js';
import type { DispatchQueue, Orchestration, PendingRequestRepository, Uuids } from './ports.js';
import { CHECK_EVERY_SECONDS, type EngineQueue } from './engine.js';
import type { DeploymentWebhooks } from './outbox.js';
import type { CreateClaim, Deployment, DeploymentDraft, PendingRequest } from './types.js';
import { pendingRequestView } from './views.js';

export interface StartDeps {
  readonly orchestration: Orchestration;
  readonly pending: PendingRequestRepository;
  readonly dispatch: DispatchQueue;
  readonly ids: IdGenerator;
  readonly uuids: Uuids;
  readonly clock: Clock;
  /** The execution engine, told about every started deployment (absent in tests of queueing alone). */
  readonly engine?: EngineQueue;
  /** Outgoing webhooks (pending_request.queued, pending_request.dispatched); absent: none. */
  readonly webhooks?: DeploymentWebhooks;
  /** Business metrics: each start and how long its request waited (0 when it started at once). */
  readonly metrics?: ServiceMetrics;
  /** Told about a side effect given up after the commit (left to the sweep); the wiring logs it. */
  readonly afterCommitFailed?: (what: string, error: unknown) => void;
}

/**
 * How often a side effect after the commit (a wake-up, a read for the answer) is tried before it is given up: once
 * (the SDK already makes up to 3 attempts of each call; the sweep redoes a lost wake-up). Stacking tries here made a
 * create outlive the gateway's 29 s after its commit (docs/decisions.md "Retries and idempotency").
 */
export const AFTER_COMMIT_ATTEMPTS = 1;

/**
 * A step after the transaction committed: tried AFTER_COMMIT_ATTEMPTS times, then given up with `fallback` (and
 * told to `afterCommitFailed`). A committed request never fails because of it: the sweep re-arms a lost check chain
 * (sweep.ts rule 3) and wakes the dispatcher when requests wait and an instance is free (rule 4).
 */
export const afterCommit = async <T>(
  deps: Pick<StartDeps, 'afterCommitFailed'>,
  what: string,
  work: () => Promise<T>,
  fallback: T,
): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= AFTER_COMMIT_ATTEMPTS) {
        deps.afterCommitFailed?.(what, error);
        return fallback;
      }
    }
  }
};

/**
 * A started deployment (committed) gets a first engine pass now and its periodic check chain; a wake-up that keeps
 * failing is left to the sweep (it re-arms the check chain of an instance not checked for LOST_CHECK_MS).
 */
export const engineStarted = async (
  deps: Pick<StartDeps, 'engine' | 'afterCommitFailed'>,
  deploymentId: string,
): Promise<void> => {
  await afterCommit(
    deps,
    `first engine pass of ${deploymentId}`,
    async () => deps.engine?.wake(deploymentId),
    undefined,
  );
  await afterCommit(
    deps,
    `check chain of ${deploymentId}`,
    async () => deps.engine?.wake(deploymentId, { delaySeconds: CHECK_EVERY_SECONDS, check: true }),
    undefined,
  );
};

/** A draft made a running deployment (not stored yet). */
export const newDeployment = async (
  deps: Pick<StartDeps, 'ids' | 'clock'>,
  draft: DeploymentDraft,
): Promise<Deployment> => {
  const { id, shortId } = await deps.ids.next('deployment');
  const now = deps.clock.now().toISOString();
  return {
    ...draft,
    id,
    shortId,
    state: 'running',
    progress: 0,
    totalSteps: draft.plan.steps.length,
    completedSteps: 0,
    failedSteps: 0,
    createdAt: now,
    startedAt: now,
    completedAt: null,
    durationMs: null,
    errorMessage: null,
    analysisEnabled: true,
    cancelReason: null,
    instanceId: null,
    revision: 1,
  };
};

/** The create's claim on its Idempotency-Key is held by another create (a retry of one that committed): nothing stored. */
export class CreateClaimedError extends Error {
  constructor(readonly scope: string) {
    super('the Idempotency-Key is claimed by another create');
    this.name = 'CreateClaimedError';
  }
}

export type StartOutcome =
  | { readonly kind: 'started'; readonly deployment: Deployment }
  | { readonly kind: 'queued'; readonly request: PendingRequest; readonly position: number };

/**
 * Starts the draft on a free instance, unless none is free or requests of the same or higher priority are waiting
 * (they go first: a create never overtakes the queue, but a hotfix with a higher priority overtakes everything
 * waiting). Otherwise stores a pending request and wakes the dispatcher, which also covers an instance freed
 * between the two steps. A keyed create's `claim` is stored with whichever it makes (CreateClaimedError when another
 * create holds it).
 */
export const startOrQueue = async (
  deps: StartDeps,
  draft: DeploymentDraft,
  claim?: CreateClaim,
): Promise<StartOutcome> => {
  const waiting = await deps.pending.queue(1);
  const ahead = waiting[0] !== undefined && waiting[0].priority >= draft.config.priority;
  if (!ahead) {
    const deployment = await newDeployment(deps, draft);
    const instanceId = await deps.orchestration.start(deployment, undefined, claim);
    if (instanceId !== undefined) {
      await engineStarted(deps, deployment.id);
      deps.metrics?.deploymentStarted(0);
      return { kind: 'started', deployment: { ...deployment, instanceId } };
    }
  }
  const now = deps.clock.now().toISOString();
  const request: PendingRequest = {
    id: deps.uuids.uuid(),
    status: 'pending',
    priority: draft.config.priority,
    tenantId: draft.tenantId,
    tenantName: draft.tenantName,
    environmentId: draft.environmentId,
    environmentName: draft.environmentName,
    triggeredBy: draft.triggeredBy,
    ...(draft.triggeredByName === undefined ? {} : { triggeredByName: draft.triggeredByName }),
    draft,
    queuedAt: now,
    createdAt: now,
    retryCount: 0,
    lastRetryAt: null,
    errorMessage: null,
    deploymentId: null,
    dispatchedAt: null,
    dispatchedToInstanceId: null,
    processingSince: null,
    waitingReason: null,
    waitingUntil: null,
  };
  await deps.pending.create(request, claim);
  // Committed: from here on nothing fails the request (a lost wake-up is the sweep's, rule 4).
  await afterCommit(
    deps,
    `dispatcher wake-up for ${request.id}`,
    () => deps.dispatch.wake(`queued ${request.id}`),
    undefined,
  );
  // The position: counted (one COUNT query); uncountable, the estimate from the queue's head read before the write.
  const position =
    (await afterCommit(deps, `queue position of ${request.id}`, () => deps.pending.position(request), undefined)) ??
    waiting.length + 1;
  await afterCommit(
    deps,
    `pending_request.queued event of ${request.id}`,
    async () =>
      await deps.webhooks?.emitter.emit({
        type: 'pending_request.queued',
        subject: [request.id],
        tenantId: request.tenantId,
        timestamp: request.queuedAt,
        since: request.createdAt,
        data: () => pendingRequestView(request, position),
      }),
    undefined,
  );
  return { kind: 'queued', request, position };
};
