// Reading deployments and pending dispatch requests, cancelling a pending request, and the orchestration capacity.
// Tenancy (decisions.md section 4): a tenant-scoped caller sees only its tenant's deployments and requests
// (anything else answers 404, a `tenant_id` filter is ignored); a global caller sees all and may filter by tenant.
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.js';
import { ForbiddenError } from '../identity/errors.js';
import { isAdminSession, requireUserSession } from '../identity/delegation.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { DeploymentsDeps } from './deps.js';
import type { DeploymentSummary } from './ports.js';
import {
  type Deployment,
  type DeploymentState,
  type PendingRequest,
  type PendingStatus,
  type SourceType,
} from './types.js';
import { deploymentDetailView, deploymentView, pendingRequestView } from './views.js';

/** The buckets of `status_counts`, each also a value of the list's `status` filter (decisions.md section 7). */
export const STATUS_BUCKETS = {
  running: ['pending', 'queued', 'running', 'rolling_back'],
  failed: ['failed', 'rolled_back'],
  succeeded: ['success'],
  other: ['cancelled'],
} as const satisfies Record<string, readonly DeploymentState[]>;
export type StatusBucket = keyof typeof STATUS_BUCKETS;

const visible = (caller: Caller, record: { readonly tenantId: string | null }): boolean =>
  caller.tenantId === null || record.tenantId === caller.tenantId;

/** The tenant filter is for global callers; tenant-scoped callers already see only their tenant. */
const inTenant = (
  caller: Caller,
  tenantId: string | undefined,
  record: { readonly tenantId: string | null },
): boolean => caller.tenantId !== null || tenantId === undefined || record.tenantId === tenantId;

const statesOf = (status: StatusBucket | DeploymentState): readonly DeploymentState[] =>
  status in STATUS_BUCKETS ? STATUS_BUCKETS[status as StatusBucket] : [status as DeploymentState];

export interface ListDeploymentsQuery extends PageRequest {
  readonly tenant_id?: string | undefined;
  /** A bucket of `status_counts` or an exact state. */
  readonly status?: StatusBucket | DeploymentState | undefined;
  readonly environment_id?: string | undefined;
  readonly source_type?: SourceType | undefined;
  readonly triggered_by?: string | undefined;
}

/**
 * Newest first; `status_counts` counts every page of the list without its status filter. Filters, counts and
 * order come from the deployments' summaries (no plan read); only the page's deployments are read in full. One
 * deleted between the two reads is left out of the page.
 */
export const listDeployments = async (
  deps: Pick<DeploymentsDeps, 'deployments'>,
  caller: Caller,
  query: ListDeploymentsQuery,
) => {
  const matching = (await deps.deployments.listSummaries())
    .filter((d) => visible(caller, d) && inTenant(caller, query.tenant_id, d))
    .filter((d) => query.environment_id === undefined || d.environmentId === query.environment_id)
    .filter((d) => query.source_type === undefined || d.sourceType === query.source_type)
    .filter((d) => query.triggered_by === undefined || d.triggeredBy === query.triggered_by);
  const count = (bucket: StatusBucket) =>
    matching.filter((d) => (STATUS_BUCKETS[bucket] as readonly DeploymentState[]).includes(d.state)).length;
  const states = query.status === undefined ? undefined : statesOf(query.status);
  const listed = matching.filter((d) => states === undefined || states.includes(d.state)).sort(newestFirst);
  const page = pageOf(listed, query);
  return {
    data: (await inOrder(deps, page.data)).map(deploymentView),
    meta: page.meta,
    status_counts: {
      all: matching.length,
      running: count('running'),
      failed: count('failed'),
      succeeded: count('succeeded'),
      other: count('other'),
    },
  };
};

const newestFirst = (a: DeploymentSummary, b: DeploymentSummary): number =>
  b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id);

/** The page's deployments read in full (one batch read), in the page's order; missing ones are left out. */
const inOrder = async (
  deps: Pick<DeploymentsDeps, 'deployments'>,
  summaries: readonly DeploymentSummary[],
): Promise<Deployment[]> => {
  if (summaries.length === 0) return [];
  const byId = new Map((await deps.deployments.getMany(summaries.map((s) => s.id))).map((d) => [d.id, d]));
  return summaries.flatMap((s) => byId.get(s.id) ?? []);
};

/** By UUID or short id; another tenant's answers 404. */
export const getDeployment = async (deps: Pick<DeploymentsDeps, 'deployments'>, caller: Caller, id: string) => {
  const deployment = await deps.deployments.find(id);
  if (deployment === undefined || !visible(caller, deployment)) throw new NotFoundError('Deployment', id);
  return deploymentDetailView(deployment);
};

export interface ListPendingQuery {
  readonly tenant_id?: string | undefined;
  readonly status?: PendingStatus | undefined;
}

/**
 * A bare array, newest first (queued_at, then id, descending). A pending request carries `queue_position`: its
 * place (1 = next) in the whole dispatch queue (every tenant's pending requests, highest priority then oldest).
 */
export const listPendingRequests = async (
  deps: Pick<DeploymentsDeps, 'pending'>,
  caller: Caller,
  query: ListPendingQuery,
) => {
  const all = await deps.pending.listAll();
  const positions = queuePositions(all);
  return all
    .filter((r) => visible(caller, r) && inTenant(caller, query.tenant_id, r))
    .filter((r) => query.status === undefined || r.status === query.status)
    .sort((a, b) => b.queuedAt.localeCompare(a.queuedAt) || b.id.localeCompare(a.id))
    .map((r) => pendingRequestView(r, positions.get(r.id)));
};

/** Each pending request's place in the whole dispatch queue (1 = next), by id. */
export const queuePositions = (all: readonly PendingRequest[]): ReadonlyMap<string, number> =>
  new Map(
    all
      .filter((r) => r.status === 'pending')
      .sort(dispatchOrder)
      .map((r, index) => [r.id, index + 1]),
  );

const dispatchOrder = (a: PendingRequest, b: PendingRequest): number =>
  b.priority - a.priority || a.queuedAt.localeCompare(b.queuedAt) || a.id.localeCompare(b.id);

const TERMINAL_PENDING: ReadonlySet<PendingStatus> = new Set(['dispatched', 'cancelled', 'failed']);

const terminalConflict = (status: PendingStatus) =>
  new ConflictError(
    `The pending request is already ${status}; only a pending or processing request can be cancelled.`,
    { status },
  );

/** pending or processing -> cancelled. Missing or another tenant's: 404; dispatched, cancelled or failed: 409. */
export const cancelPendingRequest = async (
  deps: Pick<DeploymentsDeps, 'pending' | 'clock'>,
  caller: Caller,
  id: string,
): Promise<void> => {
  const request = await deps.pending.get(id);
  if (request === undefined || !visible(caller, request)) throw new NotFoundError('Pending request', id);
  if (TERMINAL_PENDING.has(request.status)) throw terminalConflict(request.status);
  if (await deps.pending.cancel(request, deps.clock.now())) return;
  // It reached a terminal status meanwhile (dispatched, or cancelled by someone else).
  const now = await deps.pending.get(id);
  throw terminalConflict(now?.status ?? 'cancelled');
};

/** A caller without the admin role (the spec's INSUFFICIENT_PERMISSIONS, "missing role"). */
export class AdminRoleRequiredError extends DomainError {
  readonly kind = 'forbidden' as const;
  constructor(what: string) {
    super('INSUFFICIENT_PERMISSIONS', `${what} needs the admin role.`, { required_role: 'admin' });
  }
}

export const MAX_INSTANCES = 1000;

/**
 * The capacity, the instances in use and who holds them, the free instances a start can take now, and the
 * number of waiting requests. A tenant-scoped caller sees only holders that are its tenant's deployments.
 */
export const getOrchestration = async (
  deps: Pick<DeploymentsDeps, 'orchestration' | 'pending' | 'deployments'>,
  caller: Caller,
) => {
  const [instances, held, queue] = await Promise.all([
    deps.orchestration.capacity(),
    deps.orchestration.holders(),
    deps.pending.listAll(),
  ]);
  // Instances still held above a lowered capacity count against it too.
  const free = Math.max(0, instances - held.size);
  const holders = [...held]
    .map(([instance_id, deployment_id]) => ({ instance_id, deployment_id }))
    .sort((a, b) => instanceNumber(a.instance_id) - instanceNumber(b.instance_id));
  const shown =
    caller.tenantId === null
      ? holders
      : (await Promise.all(holders.map(async (h) => ({ h, d: await deps.deployments.get(h.deployment_id) }))))
          .filter(({ d }) => d !== undefined && visible(caller, d))
          .map(({ h }) => h);
  return {
    instances,
    in_use: held.size,
    available: free,
    holders: shown,
    pending: queue.filter((r) => r.status === 'pending').length,
  };
};

const instanceNumber = (id: string): number => Number(id.slice(id.lastIndexOf('-') + 1)) || 0;

/**
 * Sets the capacity (0..1000): a global user session with the admin role only (no API key, OAuth token or trigger:
 * 403 user_credentials_required). Raising it wakes the dispatcher; lowering it stops nothing: running deployments
 * keep their instances until they finish, and instances above the new capacity are not taken again.
 */
export const setOrchestration = async (
  deps: Pick<DeploymentsDeps, 'orchestration' | 'pending' | 'deployments' | 'dispatch'>,
  caller: Caller,
  command: { readonly instances: number },
) => {
  requireUserSession(caller, 'Changing the orchestration capacity');
  if (!isAdminSession(caller)) throw new AdminRoleRequiredError('Changing the orchestration capacity');
  if (caller.tenantId !== null)
    throw new ForbiddenError(
      'The orchestration capacity is shared by every tenant: only a global admin can change it.',
      { reason: 'tenant_restriction' },
    );
  if (!Number.isInteger(command.instances) || command.instances < 0 || command.instances > MAX_INSTANCES) {
    throw ValidationError.field('instances', `must be an integer from 0 to ${MAX_INSTANCES}`);
  }
  const before = await deps.orchestration.capacity();
  await deps.orchestration.setCapacity(command.instances);
  if (command.instances > before) await deps.dispatch.wake('capacity raised');
  return getOrchestration(deps, caller);
};
