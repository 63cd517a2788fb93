import { describe, expect, it } from 'vitest';
import { NotFoundError, ConflictError, ValidationError } from '../../../../domain/errors.js';
import { ForbiddenError } from '../../../../domain/identity/errors.js';
import type { Caller } from '../../../../domain/identity/types.js';
import {
  AdminRoleRequiredError,
  cancelPendingRequest,
  getDeployment,
  getOrchestration,
  listDeployments,
  listPendingRequests,
  setOrchestration,
} from '../../../../domain/deployments/queries.js';
import type { Deployment, DeploymentState, PendingStatus } from '../../../../domain/deployments/types.js';
import { deploymentView } from '../../../../domain/deployments/views.js';
import { aDeployment, aPendingRequest, deploymentsFakes } from '../../../fakes/deployments.js';

const TENANT_A = 'aaaaaaaa-0000-4000-8000-00000000000a';
const TENANT_B = 'bbbbbbbb-0000-4000-8000-00000000000b';
const ENV_A = 'eeeeeeee-0000-4000-8000-00000000000a';

const caller = (tenantId: string | null = null, roles: readonly string[] = ['admin']): Caller => ({
  kind: 'user',
  userId: 'c0000000-0000-4000-8000-000000000001',
  tenantId,
  roles,
  permissions: new Set(),
});
const global = caller();

const uuid = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** The n-th deployment, created n minutes after 10:00. */
const nth = (n: number, overrides: Partial<Deployment> = {}): Deployment =>
  aDeployment({
    id: uuid(n),
    shortId: `d${n}`,
    createdAt: new Date(Date.UTC(2026, 10, 22, 10, n)).toISOString(),
    ...overrides,
  });

const page = { page: 1, limit: 50 };

describe('listDeployments', () => {
  it('lists newest first (created_at, then id) in the spec envelope', async () => {
    const { deps, deployments } = deploymentsFakes();
    deployments.put(nth(1));
    deployments.put(nth(3));
    deployments.put(nth(2));
    deployments.put(nth(4, { createdAt: nth(3).createdAt }));

    const list = await listDeployments(deps, global, page);

    expect(list.data.map((d) => d.id)).toEqual([uuid(4), uuid(3), uuid(2), uuid(1)]);
    expect(list.meta).toEqual({ total: 4, page: 1, limit: 50, total_pages: 1, has_next: false, has_prev: false });
    expect(list.data[0]).toMatchObject({
      id: uuid(4),
      short_id: 'd4',
      source_type: 'action',
      action_name: 'restart-web',
      solution_id: null,
      state: 'running',
    });
    expect(list.data[0]).not.toHaveProperty('plan');
  });

  it('pages with page and limit, meta telling what is left', async () => {
    const { deps, deployments } = deploymentsFakes();
    for (let n = 1; n <= 5; n += 1) deployments.put(nth(n));

    const second = await listDeployments(deps, global, { page: 2, limit: 2 });
    const beyond = await listDeployments(deps, global, { page: 4, limit: 2 });

    expect(second.data.map((d) => d.id)).toEqual([uuid(3), uuid(2)]);
    expect(second.meta).toEqual({ total: 5, page: 2, limit: 2, total_pages: 3, has_next: true, has_prev: true });
    expect(beyond.data).toEqual([]);
    expect(beyond.meta.total).toBe(5);
  });

  const states: DeploymentState[] = [
    'pending',
    'queued',
    'running',
    'rolling_back',
    'failed',
    'rolled_back',
    'success',
    'cancelled',
  ];
  const everyState = () => {
    const fakes = deploymentsFakes();
    states.forEach((state, i) => fakes.deployments.put(nth(i + 1, { state })));
    return fakes;
  };

  it.each([
    ['running', ['pending', 'queued', 'running', 'rolling_back']],
    ['failed', ['failed', 'rolled_back']],
    ['succeeded', ['success']],
    ['other', ['cancelled']],
    ['rolled_back', ['rolled_back']],
    ['queued', ['queued']],
  ] as const)('filters status=%s to the states %j', async (status, expected) => {
    const { deps } = everyState();

    const list = await listDeployments(deps, global, { ...page, status });

    expect(list.data.map((d) => d.state).sort()).toEqual([...expected].sort());
    expect(list.meta.total).toBe(expected.length);
  });

  it('counts status buckets across every page and ignores the status filter', async () => {
    const { deps } = everyState();

    const list = await listDeployments(deps, global, { page: 1, limit: 1, status: 'succeeded' });

    expect(list.data).toHaveLength(1);
    expect(list.meta.total).toBe(1);
    expect(list.status_counts).toEqual({ all: 8, running: 4, failed: 2, succeeded: 1, other: 1 });
  });

  it('counts only what matches the other filters', async () => {
    const { deps, deployments } = deploymentsFakes();
    deployments.put(nth(1, { environmentId: ENV_A, state: 'success' }));
    deployments.put(nth(2, { environmentId: ENV_A, state: 'failed' }));
    deployments.put(nth(3, { environmentId: null, state: 'failed' }));

    const list = await listDeployments(deps, global, { ...page, environment_id: ENV_A, status: 'failed' });

    expect(list.data.map((d) => d.id)).toEqual([uuid(2)]);
    expect(list.status_counts).toEqual({ all: 2, running: 0, failed: 1, succeeded: 1, other: 0 });
  });

  it('filters by environment_id, source_type and triggered_by', async () => {
    const { deps, deployments } = deploymentsFakes();
    deployments.put(nth(1, { environmentId: ENV_A }));
    deployments.put(
      nth(2, { sourceType: 'solution', action: null, solution: { id: 's', name: 'stack', version: '2' } }),
    );
    deployments.put(nth(3, { triggeredBy: 'someone-else' }));

    const byEnvironment = await listDeployments(deps, global, { ...page, environment_id: ENV_A });
    const bySource = await listDeployments(deps, global, { ...page, source_type: 'solution' });
    const byUser = await listDeployments(deps, global, { ...page, triggered_by: 'someone-else' });

    expect(byEnvironment.data.map((d) => d.id)).toEqual([uuid(1)]);
    expect(bySource.data.map((d) => d.id)).toEqual([uuid(2)]);
    expect(bySource.data[0]).toMatchObject({ solution_name: 'stack', action_id: null });
    expect(byUser.data.map((d) => d.id)).toEqual([uuid(3)]);
  });

  it('lets a global caller filter by tenant; a tenant-scoped caller sees only its tenant, whatever it asks', async () => {
    const { deps, deployments } = deploymentsFakes();
    deployments.put(nth(1, { tenantId: TENANT_A }));
    deployments.put(nth(2, { tenantId: TENANT_B }));
    deployments.put(nth(3, { tenantId: null }));

    const all = await listDeployments(deps, global, page);
    const filtered = await listDeployments(deps, global, { ...page, tenant_id: TENANT_B });
    const scoped = await listDeployments(deps, caller(TENANT_A), page);
    const scopedAskingForB = await listDeployments(deps, caller(TENANT_A), { ...page, tenant_id: TENANT_B });

    expect(all.data).toHaveLength(3);
    expect(filtered.data.map((d) => d.id)).toEqual([uuid(2)]);
    expect(scoped.data.map((d) => d.id)).toEqual([uuid(1)]);
    expect(scoped.status_counts.all).toBe(1);
    expect(scopedAskingForB.data.map((d) => d.id)).toEqual([uuid(1)]);
  });

  /** The fake, counting its reads: every full read (listAll, getMany) and the ids getMany was asked for. */
  const counted = () => {
    const fakes = deploymentsFakes();
    const reads = { listAll: 0, summaries: 0, getMany: [] as (readonly string[])[] };
    const { deployments } = fakes;
    const listAll = deployments.listAll.bind(deployments);
    const listSummaries = deployments.listSummaries.bind(deployments);
    const getMany = deployments.getMany.bind(deployments);
    deployments.listAll = async () => ((reads.listAll += 1), listAll());
    deployments.listSummaries = async () => ((reads.summaries += 1), listSummaries());
    deployments.getMany = async (ids) => (reads.getMany.push(ids), getMany(ids));
    return { ...fakes, reads };
  };

  it('reads summaries for filters, counts and order, and only the page’s deployments in full, in one batch', async () => {
    const { deps, deployments, reads } = counted();
    for (let n = 1; n <= 7; n += 1) deployments.put(nth(n, { state: n % 2 === 0 ? 'failed' : 'success' }));

    const list = await listDeployments(deps, global, { page: 2, limit: 2 });

    expect(reads).toEqual({ listAll: 0, summaries: 1, getMany: [[uuid(5), uuid(4)]] });
    expect(list.data.map((d) => d.id)).toEqual([uuid(5), uuid(4)]);
    // the page's items are the full records' views (the summaries hold no names, counts or times)
    expect(list.data[0]).toEqual(deploymentView(nth(5, { state: 'success' })));
    expect(list.meta).toEqual({ total: 7, page: 2, limit: 2, total_pages: 4, has_next: true, has_prev: true });
    expect(list.status_counts).toEqual({ all: 7, running: 0, failed: 3, succeeded: 4, other: 0 });
  });

  it('keeps the page’s order whatever order the batch read answers in, and reads nothing for an empty page', async () => {
    const { deps, deployments, reads } = counted();
    for (let n = 1; n <= 4; n += 1) deployments.put(nth(n));
    const getMany = deployments.getMany.bind(deployments);
    deployments.getMany = async (ids) => [...(await getMany(ids))].reverse();

    const list = await listDeployments(deps, global, page);
    const readsForList = reads.getMany.length;
    const beyond = await listDeployments(deps, global, { page: 3, limit: 2 });

    expect(list.data.map((d) => d.id)).toEqual([uuid(4), uuid(3), uuid(2), uuid(1)]);
    expect(readsForList).toBe(1);
    expect(beyond.data).toEqual([]);
    expect(beyond.meta.total).toBe(4);
    expect(reads.getMany).toHaveLength(1);
  });

  it('leaves out of the page a deployment deleted between the summaries and the page read', async () => {
    const { deps, deployments } = deploymentsFakes();
    for (let n = 1; n <= 3; n += 1) deployments.put(nth(n));
    const listSummaries = deployments.listSummaries.bind(deployments);
    deployments.listSummaries = async () => {
      const summaries = await listSummaries();
      deployments.deployments.delete(uuid(2));
      return summaries;
    };

    const list = await listDeployments(deps, global, page);

    expect(list.data.map((d) => d.id)).toEqual([uuid(3), uuid(1)]);
    expect(list.meta.total).toBe(3);
  });
});

describe('getDeployment', () => {
  it('finds by UUID or short id and answers the detail with config and plan', async () => {
    const { deps, deployments } = deploymentsFakes();
    deployments.put(nth(7, { sourceDeploymentId: uuid(1) }));

    const byId = await getDeployment(deps, global, uuid(7));
    const byShortId = await getDeployment(deps, global, 'd7');

    expect(byShortId).toEqual(byId);
    expect(byId).toMatchObject({
      id: uuid(7),
      config: { priority: 0, target_mode: 'sequential' },
      plan: { target_count: 1 },
      error_message: null,
      source_deployment_id: uuid(1),
    });
    expect(byId.plan?.steps).toHaveLength(1);
  });

  it('answers 404 for a missing deployment and for another tenant’s', async () => {
    const { deps, deployments } = deploymentsFakes();
    deployments.put(nth(1, { tenantId: TENANT_B }));

    await expect(getDeployment(deps, global, uuid(9))).rejects.toBeInstanceOf(NotFoundError);
    await expect(getDeployment(deps, caller(TENANT_A), uuid(1))).rejects.toBeInstanceOf(NotFoundError);
    await expect(getDeployment(deps, caller(TENANT_B), 'd1')).resolves.toMatchObject({ id: uuid(1) });
  });
});

const rid = (n: number) => `90000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute, 5)).toISOString();

describe('listPendingRequests', () => {
  it('answers a bare array, newest first, in the spec formats with unset fields omitted', async () => {
    const { deps, pending } = deploymentsFakes();
    pending.put(aPendingRequest({ id: rid(1), queuedAt: at(1), createdAt: at(1) }));
    pending.put(
      aPendingRequest({
        id: rid(2),
        queuedAt: at(2),
        createdAt: at(2),
        tenantId: TENANT_A,
        tenantName: 'tenant-a',
        environmentId: ENV_A,
        environmentName: 'prod',
      }),
    );

    const list = await listPendingRequests(deps, global, {});

    expect(list.map((r) => r.id)).toEqual([rid(2), rid(1)]);
    expect(list[1]).toEqual({
      id: rid(1),
      triggered_by: 'c0000000-0000-4000-8000-000000000001',
      triggered_by_name: 'c0000000-0000-4000-8000-000000000001', // stored without a name: the id
      // What is queued: the source as resolved at create and how many targets it plans.
      source_type: 'action',
      source_name: 'restart-web',
      source_version: '1.0.0',
      target_count: 1,
      queued_at: '2026-11-22 10:01:05',
      retry_count: 0,
      status: 'pending',
      created_at: '2026-11-22 10:01:05',
      priority: 0,
      queue_position: 1,
    });
    expect(list[0]).toMatchObject({
      tenant_id: TENANT_A,
      tenant_name: 'tenant-a',
      environment_id: ENV_A,
      environment_name: 'prod',
      queued_at: '2026-11-22 10:02:05',
    });
  });

  it('shows dispatch and retry fields once set, formatted without a zone', async () => {
    const { deps, pending } = deploymentsFakes();
    pending.put(
      aPendingRequest({
        status: 'dispatched',
        retryCount: 1,
        lastRetryAt: at(3),
        errorMessage: 'Dispatch failed: boom',
        deploymentId: uuid(1),
        dispatchedAt: at(4),
        dispatchedToInstanceId: 'instance-2',
      }),
    );

    const [request] = await listPendingRequests(deps, global, {});

    expect(request).toMatchObject({
      status: 'dispatched',
      retry_count: 1,
      last_retry_at: '2026-11-22 10:03:05',
      error_message: 'Dispatch failed: boom',
      deployment_id: uuid(1),
      dispatched_at: '2026-11-22 10:04:05',
      dispatched_to_instance_id: 'instance-2',
    });
    expect(request).not.toHaveProperty('queue_position');
  });

  it('numbers pending requests in dispatch order: priority first, then oldest', async () => {
    const { deps, pending } = deploymentsFakes();
    pending.put(aPendingRequest({ id: rid(1), priority: 0, queuedAt: at(1) }));
    pending.put(aPendingRequest({ id: rid(2), priority: 5, queuedAt: at(2) }));
    pending.put(aPendingRequest({ id: rid(3), priority: 5, queuedAt: at(3) }));
    pending.put(aPendingRequest({ id: rid(4), priority: 9, queuedAt: at(4), status: 'processing' }));

    const list = await listPendingRequests(deps, global, {});
    const position = (id: string) => list.find((r) => r.id === id)?.queue_position;

    expect([position(rid(2)), position(rid(3)), position(rid(1)), position(rid(4))]).toEqual([1, 2, 3, undefined]);
  });

  it('filters by status, and by tenant for global callers; tenant-scoped callers see their tenant only', async () => {
    const { deps, pending } = deploymentsFakes();
    pending.put(aPendingRequest({ id: rid(1), tenantId: TENANT_A, queuedAt: at(1) }));
    pending.put(aPendingRequest({ id: rid(2), tenantId: TENANT_B, queuedAt: at(2) }));
    pending.put(aPendingRequest({ id: rid(3), tenantId: null, queuedAt: at(3), status: 'failed' }));

    const failed = await listPendingRequests(deps, global, { status: 'failed' });
    const ofB = await listPendingRequests(deps, global, { tenant_id: TENANT_B });
    const scoped = await listPendingRequests(deps, caller(TENANT_A), { tenant_id: TENANT_B });

    expect(failed.map((r) => r.id)).toEqual([rid(3)]);
    expect(ofB.map((r) => r.id)).toEqual([rid(2)]);
    expect(scoped.map((r) => r.id)).toEqual([rid(1)]);
    // The position is the place in the one shared queue.
    expect(scoped[0]?.queue_position).toBe(1);
    expect(ofB[0]?.queue_position).toBe(2);
  });
});

describe('cancelPendingRequest', () => {
  it.each(['pending', 'processing'] as const)('cancels a %s request', async (status) => {
    const { deps, pending } = deploymentsFakes();
    pending.put(aPendingRequest({ id: rid(1), status }));

    await expect(cancelPendingRequest(deps, global, rid(1))).resolves.toBeUndefined();

    expect((await pending.get(rid(1)))?.status).toBe('cancelled');
  });

  it.each(['dispatched', 'cancelled', 'failed'] as const)(
    'answers 409 naming the status for a %s request and leaves it',
    async (status: PendingStatus) => {
      const { deps, pending } = deploymentsFakes();
      pending.put(aPendingRequest({ id: rid(1), status }));

      const error = await cancelPendingRequest(deps, global, rid(1)).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).details).toEqual({ status });
      expect((error as ConflictError).message).toContain(status);
      expect((await pending.get(rid(1)))?.status).toBe(status);
    },
  );

  it('answers 404 for a missing request and for another tenant’s', async () => {
    const { deps, pending } = deploymentsFakes();
    pending.put(aPendingRequest({ id: rid(1), tenantId: TENANT_B }));

    await expect(cancelPendingRequest(deps, global, rid(2))).rejects.toBeInstanceOf(NotFoundError);
    await expect(cancelPendingRequest(deps, caller(TENANT_A), rid(1))).rejects.toBeInstanceOf(NotFoundError);
    expect((await pending.get(rid(1)))?.status).toBe('pending');
  });

  it('answers 409 when the request was dispatched between the read and the write', async () => {
    const { deps, pending } = deploymentsFakes();
    pending.put(aPendingRequest({ id: rid(1), status: 'processing' }));
    // A dispatcher takes it between our read and our conditional write.
    pending.cancel = async (request) => {
      pending.put({ ...request, status: 'dispatched' });
      return false;
    };

    const error = await cancelPendingRequest(deps, global, rid(1)).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).details).toEqual({ status: 'dispatched' });
  });
});

describe('orchestration', () => {
  it('shows capacity, instances in use with their holders, free instances and waiting requests', async () => {
    const { deps, orchestration, pending } = deploymentsFakes(3);
    await orchestration.start(nth(1));
    await orchestration.start(nth(2));
    pending.put(aPendingRequest({ id: rid(1) }));
    pending.put(aPendingRequest({ id: rid(2), status: 'cancelled' }));

    const view = await getOrchestration(deps, global);

    expect(view).toEqual({
      instances: 3,
      in_use: 2,
      available: 1,
      holders: [
        { instance_id: 'instance-1', deployment_id: uuid(1) },
        { instance_id: 'instance-2', deployment_id: uuid(2) },
      ],
      pending: 1,
    });
  });

  it('shows a tenant-scoped caller only the holders that are its deployments', async () => {
    const { deps, orchestration } = deploymentsFakes(2);
    await orchestration.start(nth(1, { tenantId: TENANT_A }));
    await orchestration.start(nth(2, { tenantId: TENANT_B }));

    const view = await getOrchestration(deps, caller(TENANT_A));

    expect(view.holders).toEqual([{ instance_id: 'instance-1', deployment_id: uuid(1) }]);
    expect(view.in_use).toBe(2);
  });

  it('raising the capacity stores it and wakes the dispatcher', async () => {
    const { deps, dispatch, orchestration } = deploymentsFakes(0);

    const view = await setOrchestration(deps, global, { instances: 2 });

    expect(view).toMatchObject({ instances: 2, in_use: 0, available: 2 });
    expect(await orchestration.capacity()).toBe(2);
    expect(dispatch.reasons).toEqual(['capacity raised']);
  });

  it('lowering the capacity stops nothing: holders keep their instances and count against it until they finish', async () => {
    const { deps, dispatch, orchestration, deployments } = deploymentsFakes(3);
    for (let n = 1; n <= 3; n += 1) await orchestration.start(nth(n));
    const first = (await deployments.get(uuid(1)))!;

    const view = await setOrchestration(deps, global, { instances: 1 });
    await orchestration.finish(first, { ...first, state: 'success', revision: first.revision + 1 });
    const third = (await deployments.get(uuid(3)))!;
    await orchestration.finish(third, { ...third, state: 'success', revision: third.revision + 1 });
    const after = await getOrchestration(deps, global);

    expect(dispatch.reasons).toEqual([]);
    expect(view).toMatchObject({ instances: 1, in_use: 3, available: 0 });
    expect((await deployments.get(uuid(2)))?.state).toBe('running');
    expect(after).toMatchObject({
      instances: 1,
      in_use: 1,
      available: 0,
      holders: [{ instance_id: 'instance-2', deployment_id: uuid(2) }],
    });
    expect(await orchestration.start(nth(4))).toBeUndefined();
    const second = (await deployments.get(uuid(2)))!;
    await orchestration.finish(second, { ...second, state: 'success', revision: second.revision + 1 });
    expect(await orchestration.start(nth(4))).toBe('instance-1');
    expect(await orchestration.start(nth(5))).toBeUndefined();
  });

  it('setting the same capacity does not wake the dispatcher', async () => {
    const { deps, dispatch } = deploymentsFakes(2);

    await setOrchestration(deps, global, { instances: 2 });

    expect(dispatch.reasons).toEqual([]);
  });

  it('only a global caller with the admin role may change it', async () => {
    const { deps, orchestration } = deploymentsFakes(2);

    await expect(setOrchestration(deps, caller(null, ['operator']), { instances: 5 })).rejects.toBeInstanceOf(
      AdminRoleRequiredError,
    );
    await expect(setOrchestration(deps, caller(TENANT_A, ['admin']), { instances: 5 })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    expect(await orchestration.capacity()).toBe(2);
  });

  it.each([-1, 1001, 1.5])('rejects %s instances', async (instances) => {
    const { deps, orchestration } = deploymentsFakes(2);

    await expect(setOrchestration(deps, global, { instances })).rejects.toBeInstanceOf(ValidationError);
    expect(await orchestration.capacity()).toBe(2);
  });

  it('the admin-role error is the spec’s INSUFFICIENT_PERMISSIONS', () => {
    const error = new AdminRoleRequiredError('Changing it');

    expect({ code: error.code, kind: error.kind }).toEqual({ code: 'INSUFFICIENT_PERMISSIONS', kind: 'forbidden' });
  });
});
