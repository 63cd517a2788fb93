// In-memory fakes of the deployments context, for unit tests of its use cases. They keep the adapters'
// conditions (revisions, statuses, free instances) so a use case that loses a race behaves as in production.
import type { DeploymentsDeps } from '../../domain/deployments/deps.js';
import type {
  DeploymentRepository,
  DeploymentSummary,
  DispatchQueue,
  Orchestration,
  PendingRequestRepository,
} from '../../domain/deployments/ports.js';
import type {
  Deployment,
  DeploymentDraft,
  HeldInstance,
  OutboxEntry,
  PendingRequest,
  Plan,
  PlanStep,
  StepScript,
} from '../../domain/deployments/types.js';
import { TERMINAL_STATES } from '../../domain/deployments/types.js';
import { RequestNotProcessingError } from '../../domain/deployments/dispatch.js';
import { FakeClock } from './clock.js';
import { fakeIds } from './identity.js';

export class FakeDeploymentRepository implements DeploymentRepository {
  readonly deployments = new Map<string, Deployment>();
  /** Stores a deployment as is (test setup; production stores new deployments through Orchestration.start). */
  put(deployment: Deployment): Deployment {
    this.deployments.set(deployment.id, deployment);
    return deployment;
  }
  async get(id: string) {
    return this.deployments.get(id);
  }
  async getMany(ids: readonly string[]) {
    return [...new Set(ids)].flatMap((id) => {
      const deployment = this.deployments.get(id);
      return deployment === undefined ? [] : [deployment];
    });
  }
  async find(idOrShortId: string) {
    return this.deployments.get(idOrShortId) ?? [...this.deployments.values()].find((d) => d.shortId === idOrShortId);
  }
  async listAll() {
    return [...this.deployments.values()];
  }
  /** Only the summary's attributes, as the adapter's projected query reads them. */
  async listSummaries() {
    return [...this.deployments.values()].map(
      ({ id, tenantId, state, environmentId, sourceType, triggeredBy, createdAt }): DeploymentSummary => ({
        id,
        tenantId,
        state,
        environmentId,
        sourceType,
        triggeredBy,
        createdAt,
      }),
    );
  }
  async update(previous: Deployment, next: Deployment) {
    if (this.deployments.get(previous.id)?.revision !== previous.revision) return false;
    this.deployments.set(next.id, next);
    return true;
  }
  async recordFailedPass(id: string, kind: string) {
    const current = this.deployments.get(id);
    if (current === undefined || TERMINAL_STATES.has(current.state)) return undefined;
    const count = current.passFailures?.kind === kind ? current.passFailures.count + 1 : 1;
    this.deployments.set(id, { ...current, passFailures: { count, kind } });
    return count;
  }
  async clearFailedPasses(deployment: Deployment) {
    const current = this.deployments.get(deployment.id);
    if (current?.revision === deployment.revision)
      this.deployments.set(deployment.id, { ...current, passFailures: undefined });
  }
}

export class FakePendingRequestRepository implements PendingRequestRepository {
  readonly requests = new Map<string, PendingRequest>();
  /** Stores a request in any status (test setup). */
  put(request: PendingRequest): PendingRequest {
    this.requests.set(request.id, request);
    return request;
  }
  async create(request: PendingRequest) {
    this.requests.set(request.id, request);
  }
  async get(id: string) {
    return this.requests.get(id);
  }
  async listAll() {
    return [...this.requests.values()];
  }
  async queue(limit: number) {
    return [...this.requests.values()]
      .filter((r) => r.status === 'pending')
      .sort(dispatchOrder)
      .slice(0, limit);
  }
  async position(request: PendingRequest) {
    const index = (await this.queue(Number.MAX_SAFE_INTEGER)).findIndex((r) => r.id === request.id);
    return index === -1 ? undefined : index + 1;
  }
  async claim(request: PendingRequest, at: Date) {
    return this.move(request, ['pending'], (r) => ({ ...r, status: 'processing', processingSince: at.toISOString() }));
  }
  async release(request: PendingRequest, error: { readonly message: string; readonly at: Date } | undefined) {
    return this.move(request, ['processing'], (r) => ({
      ...r,
      status: 'pending',
      processingSince: null,
      ...(error === undefined
        ? {}
        : { errorMessage: error.message, retryCount: r.retryCount + 1, lastRetryAt: error.at.toISOString() }),
    }));
  }
  async fail(request: PendingRequest, message: string, at: Date) {
    return this.move(request, ['processing'], (r) => ({
      ...r,
      status: 'failed',
      errorMessage: message,
      retryCount: r.retryCount + 1,
      lastRetryAt: at.toISOString(),
      processingSince: null,
    }));
  }
  async cancel(request: PendingRequest, _at: Date) {
    return this.move(request, ['pending', 'processing'], (r) => ({ ...r, status: 'cancelled', processingSince: null }));
  }
  async processing(limit: number) {
    return [...this.requests.values()]
      .filter((r) => r.status === 'processing')
      .sort((a, b) => (a.processingSince ?? '').localeCompare(b.processingSince ?? ''))
      .slice(0, limit);
  }
  async setWaiting(request: PendingRequest, reason: string | null, until: string | null) {
    return this.move(request, ['pending'], (r) => ({ ...r, waitingReason: reason, waitingUntil: until }));
  }
  /** Marks a processing request dispatched (what FakeOrchestration.start does in its transaction). */
  dispatch(request: PendingRequest, deploymentId: string, instanceId: string, at: Date): boolean {
    return this.move(request, ['processing'], (r) => ({
      ...r,
      status: 'dispatched',
      deploymentId,
      dispatchedAt: at.toISOString(),
      dispatchedToInstanceId: instanceId,
      processingSince: null,
      waitingReason: null,
      waitingUntil: null,
    }));
  }
  private move(
    request: PendingRequest,
    from: readonly PendingRequest['status'][],
    change: (r: PendingRequest) => PendingRequest,
  ): boolean {
    const current = this.requests.get(request.id);
    if (current === undefined || !from.includes(current.status)) return false;
    this.requests.set(request.id, change(current));
    return true;
  }
}

/** Highest priority first, then oldest, then id (the dispatch order). */
export const dispatchOrder = (a: PendingRequest, b: PendingRequest): number =>
  b.priority - a.priority || a.queuedAt.localeCompare(b.queuedAt) || a.id.localeCompare(b.id);

/**
 * Instances `instance-1` .. `instance-<capacity>` (as infra/dynamodb/orchestration.ts). `start` takes the lowest
 * free one (the adapter takes a random one) and stores the deployment holding it, with its `instanceId` set;
 * `finish` stores the terminal deployment (`instanceId` null) and frees the instance `previous` held. Shrinking
 * the capacity leaves holders above it in place until they finish; their instances are not taken again.
 */
export class FakeOrchestration implements Orchestration {
  readonly held = new Map<string, string>();
  /** Instance id -> when its holder's periodic check last ran (epoch ms). */
  readonly checkedAt = new Map<string, number>();
  /** The outbox, by `<at>#<deployment id>`. */
  readonly owed = new Map<string, OutboxEntry>();
  constructor(
    private instances: number,
    private readonly deployments: FakeDeploymentRepository,
    private readonly pending: FakePendingRequestRepository = new FakePendingRequestRepository(),
  ) {}
  async capacity() {
    return this.instances;
  }
  async setCapacity(instances: number) {
    this.instances = instances;
  }
  async holders(): Promise<ReadonlyMap<string, string>> {
    return new Map(this.held);
  }
  async start(deployment: Deployment, dispatched?: { readonly request: PendingRequest; readonly at: Date }) {
    const instanceId = this.freeInstance();
    if (instanceId === undefined) return undefined;
    if (this.deployments.deployments.has(deployment.id)) throw new Error(`deployment ${deployment.id} exists already`);
    if (
      dispatched !== undefined &&
      !this.pending.dispatch(dispatched.request, deployment.id, instanceId, dispatched.at)
    ) {
      throw new RequestNotProcessingError(dispatched.request.id);
    }
    this.held.set(instanceId, deployment.id);
    this.deployments.put({ ...deployment, instanceId });
    return instanceId;
  }
  async finish(previous: Deployment, next: Deployment, owed?: OutboxEntry) {
    if (!(await this.deployments.update(previous, { ...next, instanceId: null }))) return false;
    if (previous.instanceId !== null && this.held.get(previous.instanceId) === previous.id) {
      this.held.delete(previous.instanceId);
      this.checkedAt.delete(previous.instanceId);
    }
    if (owed !== undefined) this.owed.set(`${owed.at}#${owed.deploymentId}`, owed);
    return true;
  }
  async outbox(before: Date, limit: number) {
    return [...this.owed.entries()]
      .filter(([key]) => key < before.toISOString())
      .sort(([a], [b]) => a.localeCompare(b))
      .slice(0, limit)
      .map(([, e]) => e);
  }
  async outboxEntry(deploymentId: string, at: string) {
    return this.owed.get(`${at}#${deploymentId}`);
  }
  async settled(entry: OutboxEntry) {
    this.owed.delete(`${entry.at}#${entry.deploymentId}`);
  }
  async heldInstances(): Promise<readonly HeldInstance[]> {
    return [...this.held].map(([instanceId, deploymentId]) => {
      const checked = this.checkedAt.get(instanceId);
      return {
        instanceId,
        deploymentId,
        heldSince: null,
        checkedAt: checked === undefined ? null : new Date(checked).toISOString(),
      };
    });
  }
  async recordCheck(instanceId: string, deploymentId: string, at: Date, minGapMs: number) {
    if (this.held.get(instanceId) !== deploymentId) return false;
    const last = this.checkedAt.get(instanceId);
    if (last !== undefined && last > at.getTime() - minGapMs) return false;
    this.checkedAt.set(instanceId, at.getTime());
    return true;
  }
  private freeInstance(): string | undefined {
    if (this.held.size >= this.instances) return undefined;
    for (let n = 1; n <= this.instances; n += 1) if (!this.held.has(`instance-${n}`)) return `instance-${n}`;
    return undefined;
  }
}

export class FakeDispatchQueue implements DispatchQueue {
  readonly reasons: string[] = [];
  async wake(reason: string) {
    this.reasons.push(reason);
  }
}

const TARGET_ID = 'e0000000-0000-4000-8000-000000000001';
const ACTION = { id: 'a0000000-0000-4000-8000-000000000001', name: 'restart-web', version: '1.0.0' } as const;

export const aPlan = (overrides: Partial<Plan> = {}): Plan => ({
  targetCount: 1,
  steps: [
    {
      id: 'b0000000-0000-4000-8000-000000000001',
      targetId: TARGET_ID,
      targetName: 'web-1',
      sequenceId: null,
      sequenceName: null,
      sequenceOrder: 1,
      actionId: ACTION.id,
      actionName: ACTION.name,
      actionSlug: 'restart-web',
      actionOrder: 1,
      actionVersion: ACTION.version,
      actionVersionId: 'a1000000-0000-4000-8000-000000000001',
      state: 'pending',
      startedAt: null,
      completedAt: null,
      exitCode: null,
      errorMessage: null,
      retryCount: 0,
      durationMs: null,
    },
  ],
  resolvedVariables: {},
  tenantName: null,
  environmentName: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  ...overrides,
});

/**
 * A plan as production makes them (about 22 KB stored): 10 targets x 3 actions, three pinned scripts, a dozen
 * variables; `n` makes its step ids unique per deployment.
 */
export const aRealisticPlan = (n: number): Plan => {
  const [step] = aPlan().steps as [PlanStep];
  const steps = Array.from({ length: 30 }, (_, i) => ({
    ...step,
    id: `b${String(n).padStart(7, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`,
    targetName: `web-${i % 10}`,
    actionOrder: Math.floor(i / 10) + 1,
    state: 'completed' as const,
    startedAt: '2026-11-22T10:00:00.000Z',
    completedAt: '2026-11-22T10:01:00.000Z',
    exitCode: 0,
    durationMs: 60_000,
  }));
  const script = `#!/bin/sh\nset -eu\n${'echo "restarting the web tier and waiting for it"\n'.repeat(12)}`;
  return aPlan({
    targetCount: 10,
    steps,
    scripts: Object.fromEntries(
      [1, 2, 3].map((v): [string, StepScript] => [
        `a100000${v}-0000-4000-8000-000000000001`,
        { script, interpreter: 'sh', rollbackScript: script, timeoutSeconds: 600 },
      ]),
    ),
    resolvedVariables: Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`VAR_${i}`, { value: `value-${i}-${'x'.repeat(12)}`, secret: false }]),
    ),
  });
};

/** An action deployed to one target, global, with the create body's defaults. */
export const aDraft = (overrides: Partial<DeploymentDraft> = {}): DeploymentDraft => ({
  sourceType: 'action',
  solution: null,
  sequence: null,
  action: { ...ACTION },
  tenantId: null,
  tenantName: null,
  environmentId: null,
  environmentName: null,
  triggeredBy: 'c0000000-0000-4000-8000-000000000001',
  config: {
    targetMode: 'sequential',
    failureStrategy: 'stop_on_first_failure',
    rollbackStrategy: 'none',
    priority: 0,
    timeoutSeconds: 300,
    maxRetries: 0,
    deploymentTimeoutSeconds: 0,
    targetIds: [TARGET_ID],
    targetTags: [],
    targetTagsMatchAll: false,
    variables: {},
    promptedValues: {},
    versionRequirement: null,
    tenantId: null,
    environmentId: null,
    bypassCache: false,
  },
  plan: aPlan(),
  freezeOverride: null,
  sourceDeploymentId: null,
  ...overrides,
});

/** A running deployment of aDraft(), holding no instance unless told. */
export const aDeployment = (overrides: Partial<Deployment> = {}): Deployment => ({
  ...aDraft(),
  id: 'd0000000-0000-4000-8000-000000000001',
  shortId: 'd1',
  state: 'running',
  progress: 0,
  totalSteps: 1,
  completedSteps: 0,
  failedSteps: 0,
  createdAt: '2026-11-22T10:00:00.000Z',
  startedAt: '2026-11-22T10:00:00.000Z',
  completedAt: null,
  durationMs: null,
  errorMessage: null,
  analysisEnabled: true,
  cancelReason: null,
  instanceId: null,
  revision: 1,
  ...overrides,
});

/** A pending request for aDraft(), priority 0. */
export const aPendingRequest = (overrides: Partial<PendingRequest> = {}): PendingRequest => {
  const draft = overrides.draft ?? aDraft();
  return {
    id: '90000000-0000-4000-8000-000000000001',
    status: 'pending',
    priority: draft.config.priority,
    tenantId: draft.tenantId,
    tenantName: draft.tenantName,
    environmentId: draft.environmentId,
    environmentName: draft.environmentName,
    triggeredBy: draft.triggeredBy,
    draft,
    queuedAt: '2026-11-22T10:00:00.000Z',
    createdAt: '2026-11-22T10:00:00.000Z',
    retryCount: 0,
    lastRetryAt: null,
    errorMessage: null,
    deploymentId: null,
    dispatchedAt: null,
    dispatchedToInstanceId: null,
    processingSince: null,
    ...overrides,
  };
};

/** The deployments context's deps on fakes, wired together; `capacity` instances (default 4). */
export const deploymentsFakes = (capacity = 4) => {
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const deployments = new FakeDeploymentRepository();
  const pending = new FakePendingRequestRepository();
  const orchestration = new FakeOrchestration(capacity, deployments, pending);
  const dispatch = new FakeDispatchQueue();
  const deps: DeploymentsDeps = { deployments, orchestration, pending, dispatch, clock, ids: fakeIds() };
  return { deps, clock, deployments, pending, orchestration, dispatch };
};
