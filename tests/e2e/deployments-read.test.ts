// Reading deployments over HTTP: the list envelope with its filters and status_counts, get by id or short id with
// tenant isolation, the pending dispatch requests (formats, positions, delete in every state) and the
// orchestration capacity. Deployments and requests are stored through the service's own wiring, as the create
// and the dispatcher store them, so these tests depend only on the read side.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, PendingRequest } from '../../domain/deployments/types.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { aDeployment, aDraft, aPendingRequest } from '../fakes/deployments.js';
import { useStack } from '../support/stack-fixture.js';

/** A real tenant (its users reference it), created before anything uses it. */
let TENANT_A = '';
// The seeded running deployments have no engine check chain (they were never started): the sweep would rightly
// give them one, and the engine would end them. This file tests the read side only, so its sweep stays idle.
const e2e = useStack('deployments-read', { env: { SWEEP_INTERVAL_MS: '3600000' } });
let operator: string;
let tenantUser: string;

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });
const wiring = async () => (await import('../../functions/shared/deployments-wiring.js')).deploymentsDeps();

const uuid = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const rid = (n: number) => `90000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const minute = (n: number) => new Date(Date.UTC(2026, 10, 22, 10, n, 7)).toISOString();

/** Stores a running deployment holding an instance, then moves it to `state` when that is terminal. */
const seedDeployment = async (n: number, state: Deployment['state'], overrides: Partial<Deployment> = {}) => {
  const deps = await wiring();
  const deployment = aDeployment({ id: uuid(n), shortId: `e2e${n}`, createdAt: minute(n), ...overrides });
  const instanceId = await deps.orchestration.start(deployment);
  if (instanceId === undefined) throw new Error('no free instance to seed with');
  if (state !== 'running') {
    const held = { ...deployment, instanceId };
    await deps.orchestration.finish(held, { ...held, state, completedAt: minute(n + 1), revision: held.revision + 1 });
  }
};

/** The seeded requests' triggering user: an active one (the dispatcher fails requests of users no longer active). */
let triggerer: string;
const seedRequest = async (n: number, overrides: Partial<PendingRequest> = {}) =>
  (await wiring()).pending.create(
    aPendingRequest({ id: rid(n), queuedAt: minute(n), createdAt: minute(n), triggeredBy: triggerer, ...overrides }),
  );

beforeAll(async () => {
  TENANT_A = (
    await api.call('POST', '/api/v1/tenants', { token: e2e.admin, body: { name: 'Tenant A', slug: 'tenant-a' } })
  ).json.id;
  triggerer = await createUser('oscar@example.com', 'oscar-password', ['operator']);
  await createUser('tina@example.com', 'tina-password', ['operator'], TENANT_A);
  operator = (await api.login({ email: 'oscar@example.com', password: 'oscar-password' })).token;
  tenantUser = (await api.login({ email: 'tina@example.com', password: 'tina-password' })).token;
  await seedDeployment(1, 'success');
  await seedDeployment(2, 'failed');
  await seedDeployment(3, 'cancelled');
  await seedDeployment(4, 'running');
  await seedDeployment(5, 'running', { tenantId: TENANT_A, tenantName: 'tenant-a' });
});

describe('deployment list', () => {
  it('answers the envelope newest first, with status_counts over every page ignoring the status filter', async () => {
    const all = await call('GET', '/deployments', e2e.admin);
    const page = await call('GET', '/deployments?status=running&limit=1&page=2', e2e.admin);

    expect(all.status).toBe(200);
    expect(all.json.data.map((d: { id: string }) => d.id)).toEqual([uuid(5), uuid(4), uuid(3), uuid(2), uuid(1)]);
    expect(all.json.meta).toEqual({ total: 5, page: 1, limit: 50, total_pages: 1, has_next: false, has_prev: false });
    expect(all.json.status_counts).toEqual({ all: 5, running: 2, failed: 1, succeeded: 1, other: 1 });
    expect(page.json.data.map((d: { id: string }) => d.id)).toEqual([uuid(4)]);
    expect(page.json.meta).toMatchObject({ total: 2, page: 2, limit: 1, has_prev: true, has_next: false });
    expect(page.json.status_counts).toEqual(all.json.status_counts);
  });

  it('filters by exact state, tenant and source type; a tenant-scoped caller sees only its tenant', async () => {
    const cancelled = await call('GET', '/deployments?status=cancelled', e2e.admin);
    const ofTenant = await call('GET', `/deployments?tenant_id=${TENANT_A}`, e2e.admin);
    const solutions = await call('GET', '/deployments?source_type=solution', e2e.admin);
    const scoped = await call('GET', '/deployments', tenantUser);

    expect(cancelled.json.data.map((d: { id: string }) => d.id)).toEqual([uuid(3)]);
    expect(ofTenant.json.data.map((d: { id: string }) => d.id)).toEqual([uuid(5)]);
    expect(solutions.json.data).toEqual([]);
    expect(scoped.json.data.map((d: { id: string }) => d.id)).toEqual([uuid(5)]);
    expect(scoped.json.status_counts.all).toBe(1);
  });

  it('answers 400 for an unknown status, a limit above 100 or a page below 1', async () => {
    for (const query of ['status=done', 'limit=101', 'page=0', 'source_type=script', 'tenant_id=nope']) {
      const reply = await call('GET', `/deployments?${query}`, e2e.admin);
      expect([query, reply.status, reply.json.error.code]).toEqual([query, 400, 'VALIDATION_ERROR']);
    }
  });
});

describe('deployment get', () => {
  it('answers the detail by id or short id, and 404 for another tenant’s or a missing one', async () => {
    const byId = await call('GET', `/deployments/${uuid(2)}`, e2e.admin);
    const byShortId = await call('GET', '/deployments/e2e2', e2e.admin);
    const foreign = await call('GET', `/deployments/${uuid(2)}`, tenantUser);
    const own = await call('GET', '/deployments/e2e5', tenantUser);
    const missing = await call('GET', `/deployments/${uuid(99)}`, e2e.admin);

    expect(byId.status).toBe(200);
    expect(byId.json).toMatchObject({
      id: uuid(2),
      state: 'failed',
      completed_at: minute(3),
      config: { priority: 0 },
      plan: { target_count: 1 },
    });
    expect(byShortId.json).toEqual(byId.json);
    expect([foreign.status, foreign.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(own.status).toBe(200);
    expect(missing.status).toBe(404);
  });
});

describe('orchestration capacity', () => {
  it('shows the running deployments holding instances', async () => {
    const view = await call('GET', '/admin/orchestration', e2e.admin);

    expect(view.status).toBe(200);
    expect(view.json).toMatchObject({ instances: 4, in_use: 2, available: 2 });
    expect(view.json.holders.map((h: { deployment_id: string }) => h.deployment_id).sort()).toEqual([uuid(4), uuid(5)]);
  });

  it('lets only an admin change it, within 0..1000', async () => {
    const byOperator = await call('PUT', '/admin/orchestration', operator, { instances: 8 });
    const tooMany = await call('PUT', '/admin/orchestration', e2e.admin, { instances: 1001 });
    const notInteger = await call('PUT', '/admin/orchestration', e2e.admin, { instances: 1.5 });

    expect([byOperator.status, byOperator.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect([tooMany.status, notInteger.status]).toEqual([400, 400]);
    expect((await call('GET', '/admin/orchestration', e2e.admin)).json.instances).toBe(4);
  });
});

describe('pending dispatch requests', () => {
  beforeAll(async () => {
    // Capacity 0 first, so the dispatcher leaves the seeded requests waiting.
    const zero = await call('PUT', '/admin/orchestration', e2e.admin, { instances: 0 });
    if (zero.status !== 200) throw new Error(`PUT orchestration answered ${zero.status}`);
    await seedRequest(1, { priority: 0 });
    await seedRequest(2, { priority: 5, draft: aDraft({ tenantId: TENANT_A, tenantName: 'tenant-a' }) });
    await seedRequest(3, { priority: 0 });
  });

  it('lists a bare array newest first, in the spec formats, with queue positions', async () => {
    const list = await call('GET', '/deployments/pending', e2e.admin);
    const scoped = await call('GET', '/deployments/pending', tenantUser);

    expect(list.status).toBe(200);
    expect(list.json.map((r: { id: string }) => r.id)).toEqual([rid(3), rid(2), rid(1)]);
    expect(list.json[2]).toEqual({
      id: rid(1),
      triggered_by: triggerer,
      triggered_by_name: triggerer, // stored without a name (as before names were): the id
      // What is queued: the source as resolved at create and the number of targets it plans.
      source_type: 'action',
      source_name: 'restart-web',
      source_version: '1.0.0',
      target_count: 1,
      queued_at: '2026-11-22 10:01:07',
      retry_count: 0,
      status: 'pending',
      created_at: '2026-11-22 10:01:07',
      priority: 0,
      queue_position: 2,
    });
    expect(list.json.map((r: { queue_position: number }) => r.queue_position)).toEqual([3, 1, 2]);
    expect(scoped.json.map((r: { id: string }) => r.id)).toEqual([rid(2)]);
    expect((await call('GET', '/admin/orchestration', e2e.admin)).json).toMatchObject({
      instances: 0,
      available: 0,
      pending: 3,
    });
  });

  it('answers 400 for an unknown status filter', async () => {
    const reply = await call('GET', '/deployments/pending?status=waiting', e2e.admin);

    expect([reply.status, reply.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('cancels with 200 and an empty body, then 409 naming the status; 404 when missing or another tenant’s', async () => {
    const foreign = await call('DELETE', `/deployments/pending/${rid(3)}`, tenantUser);
    const first = await call('DELETE', `/deployments/pending/${rid(3)}`, e2e.admin);
    const again = await call('DELETE', `/deployments/pending/${rid(3)}`, e2e.admin);
    const missing = await call('DELETE', `/deployments/pending/${rid(99)}`, e2e.admin);
    const cancelled = await call('GET', '/deployments/pending?status=cancelled', e2e.admin);

    expect([foreign.status, foreign.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(first.status).toBe(200);
    expect(first.json).toBeUndefined();
    expect([again.status, again.json.error.code, again.json.error.details]).toEqual([
      409,
      'CONFLICT',
      { status: 'cancelled' },
    ]);
    expect(missing.status).toBe(404);
    expect(cancelled.json.map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([
      [rid(3), 'cancelled'],
    ]);
    expect(cancelled.json[0]).not.toHaveProperty('queue_position');
  });
});

describe('raising the capacity', () => {
  it('wakes the dispatcher: the free instance goes to the highest-priority request, without any other call', async () => {
    const raised = await call('PUT', '/admin/orchestration', e2e.admin, { instances: 3 });
    const until = Date.now() + 20_000;
    let list = await call('GET', '/deployments/pending?status=dispatched', e2e.admin);
    while (list.json.length < 1 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      list = await call('GET', '/deployments/pending?status=dispatched', e2e.admin);
    }
    // The seeded requests name a target that does not exist, so the engine fails each dispatched deployment at once
    // and the dispatcher goes on with the next: the first one dispatched is the highest-priority request.
    const first = list.json.find((r: { id: string }) => r.id === rid(2));
    const deployment = await call('GET', `/deployments/${first?.deployment_id}`, e2e.admin);

    expect(raised.json).toMatchObject({ instances: 3, in_use: 2 });
    expect(first).toMatchObject({
      dispatched_to_instance_id: expect.stringMatching(/^instance-[1-3]$/),
      dispatched_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });
    expect(list.json.every((r: { dispatched_at: string }) => r.dispatched_at >= first.dispatched_at)).toBe(true);
    expect(deployment.json).toMatchObject({ tenant_id: TENANT_A, state: expect.stringMatching(/^(running|failed)$/) });
  });
});
