// Deployments over HTTP as a user drives them, with the local agents enrolled: create (started, queued, dry run,
// frozen, overridden), the dispatch queue draining as capacity returns, cancel and redeploy, and the capacity
// holding under 20 concurrent creates.
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';

// This file bursts (20 concurrent creates, tight polling) from one address on a loaded machine: the general rate
// limit and the front's admission gate are not what it tests (tests/e2e/rate-limit.test.ts and overload.test.ts
// do), so both are raised here.
const e2e = useStackWithAgents('deploy', {
  env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000' },
  admission: { maxInFlight: 64, maxQueued: 64, maxWaitMs: 30_000, healthSlots: 2 },
});
let actionId: string;

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });
const setCapacity = async (instances: number) =>
  expect((await call('PUT', '/admin/orchestration', e2e.admin, { instances })).status).toBe(200);
const deployWeb = (extra: Record<string, unknown> = {}) =>
  call('POST', '/deployments', e2e.admin, {
    action_id: actionId,
    target_tags: [{ key: 'role', value: 'web' }],
    variables: { WHO: 'ops' },
    ...extra,
  });

/** Polls until `check` passes (the dispatcher runs asynchronously, woken through SQS). */
const eventually = async <T>(read: () => Promise<T>, check: (value: T) => boolean, withinMs = 15_000): Promise<T> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`not reached in ${withinMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

/** Cancels every running deployment (frees the instances between tests). */
const cancelAllRunning = async () => {
  const list = await call('GET', '/deployments?status=running&limit=100', e2e.admin);
  for (const d of list.json.data)
    await call('POST', `/deployments/${d.id}/cancel`, e2e.admin, { reason: 'test cleanup' });
};

beforeAll(async () => {
  const action = await call('POST', '/actions', e2e.admin, {
    slug: 'hello',
    name: 'Say hello',
    // Long enough to stay running while a test looks at it (the tests cancel what they start).
    version: {
      version: '1.0.0',
      script: 'echo "hello $WHO"; sleep 60',
      variables: [{ name: 'WHO', default: 'world' }],
    },
  });
  expect([action.status, action.json]).toEqual([201, expect.anything()]);
  actionId = action.json.id;
  expect(
    (
      await call('POST', `/actions/${actionId}/versions`, e2e.admin, {
        version: '1.1.0',
        script: 'echo "hi $WHO"; sleep 60',
        variables: [{ name: 'WHO', required: true }],
      })
    ).status,
  ).toBe(201);
});

describe('create', () => {
  it('starts a deployment of an action on local-1 (201) that can be listed, fetched by short id, and cancelled', async () => {
    // Act
    const created = await deployWeb({ version_requirement: '^1.0.0', variables: { WHO: 'team' } });
    // Assess
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      pending: false,
      deployment_id: expect.any(String),
      message: expect.any(String),
    });
    const deployment = created.json.deployment;
    expect(deployment).toMatchObject({
      source_type: 'action',
      action_id: actionId,
      action_name: 'Say hello',
      action_version: '1.1.0',
      solution_id: null,
      sequence_id: null,
      state: 'running',
      progress: 0,
      total_steps: 1,
      completed_steps: 0,
      failed_steps: 0,
      analysis_enabled: true,
      error_message: null,
      config: { priority: 0, target_tags: [{ key: 'role', value: 'web' }] },
      plan: { target_count: 1, resolved_variables: { WHO: 'team' } },
    });
    expect(deployment.plan.steps[0]).toMatchObject({
      target_name: 'local-1',
      action_order: 1,
      sequence_order: 1,
      state: 'pending',
      retry_count: 0,
    });
    const fetched = await call('GET', `/deployments/${deployment.short_id}`, e2e.admin);
    expect(fetched.json.id).toBe(deployment.id);
    const list = await call('GET', '/deployments', e2e.admin);
    expect(list.json.data[0].id).toBe(deployment.id);
    expect(list.json.status_counts).toMatchObject({ all: 1, running: 1 });

    const cancelled = await call('POST', `/deployments/${deployment.id}/cancel`, e2e.admin, { reason: 'just testing' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ state: 'cancelled', plan: null, completed_at: expect.any(String) });
    expect((await call('POST', `/deployments/${deployment.id}/cancel`, e2e.admin, {})).json.error.code).toBe(
      'CONFLICT',
    );
    expect((await call('GET', '/deployments?status=other', e2e.admin)).json.meta.total).toBe(1);
  });

  it('answers 400 naming the field for each broken rule, and a required variable without a value', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ target_tags: [{ key: 'role', value: 'web' }] }, 'action_id'],
      [{ action_id: actionId }, 'target_ids'],
      [{ action_id: actionId, target_ids: ['x'], priority: 101 }, 'priority'],
      [{ action_id: actionId, target_ids: ['x'], timeout_seconds: 0 }, 'timeout_seconds'],
      [{ action_id: actionId, target_ids: ['x'], max_retries: 11 }, 'max_retries'],
      [{ action_id: actionId, target_ids: ['x'], tenant_id: 'acme' }, 'environment_id'],
      [{ action_id: actionId, target_ids: ['x'], override_freeze: true }, 'override_reason'],
      [
        { action_id: actionId, target_tags: [{ key: 'role', value: 'web' }], version_requirement: '^1.1.0' },
        'variables.WHO',
      ],
      [
        { action_id: actionId, target_tags: [{ key: 'role', value: 'web' }], version_requirement: '^9' },
        'version_requirement',
      ],
    ];
    for (const [body, field] of cases) {
      const reply = await call('POST', '/deployments', e2e.admin, body);
      expect([
        reply.status,
        reply.json.error.details?.fields?.map((f: { field: string }) => f.field).join(','),
      ]).toEqual([400, expect.stringContaining(field)]);
    }
  });

  it('dry_run shows the plan and creates nothing', async () => {
    const before = (await call('GET', '/deployments', e2e.admin)).json.meta.total;
    const dry = await deployWeb({ dry_run: true });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ dry_run: true, plan: { target_count: 1 } });
    expect((await call('GET', '/deployments', e2e.admin)).json.meta.total).toBe(before);
  });

  it('is refused during a freeze (409 DEPLOYMENT_FROZEN) unless an admin overrides with a reason', async () => {
    // Prepare
    const freeze = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'release week',
      start_time: new Date(Date.now() - 60_000).toISOString(),
      end_time: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(freeze.status).toBe(201);
    await createUser('op@example.com', 'operator-password', ['operator']);
    const operator = (await api.login({ email: 'op@example.com', password: 'operator-password' })).token;
    try {
      // Act + Assess
      const frozen = await deployWeb();
      expect(frozen.status).toBe(409);
      expect(frozen.json.error).toMatchObject({
        code: 'DEPLOYMENT_FROZEN',
        details: { can_override: true, active_freezes: [{ id: freeze.json.id, name: 'release week' }] },
      });
      const asOperator = await call('POST', '/deployments', operator, {
        action_id: actionId,
        target_tags: [{ key: 'role', value: 'web' }],
        variables: { WHO: 'ops' },
      });
      expect(asOperator.json.error.details.can_override).toBe(false);
      expect(
        (
          await call('POST', '/deployments', operator, {
            action_id: actionId,
            target_tags: [{ key: 'role', value: 'web' }],
            variables: { WHO: 'ops' },
            override_freeze: true,
            override_reason: 'hotfix',
          })
        ).status,
      ).toBe(403);
      const overridden = await deployWeb({ override_freeze: true, override_reason: 'security hotfix' });
      expect(overridden.status).toBe(201);
      expect(overridden.json.deployment.freeze_override).toMatchObject({
        reason: 'security hotfix',
        freezes: [{ id: freeze.json.id }],
      });
    } finally {
      await call('DELETE', `/deployment-freezes/${freeze.json.id}`, e2e.admin);
      await cancelAllRunning();
    }
  });
});

describe('the dispatch queue', () => {
  it('queues at capacity 0 (202, position), dispatches when capacity returns, then redeploys', async () => {
    // Prepare
    await setCapacity(0);
    // Act
    const queued = await deployWeb({ priority: 5 });
    // Assess
    expect(queued.status).toBe(202);
    expect(queued.json).toMatchObject({ pending: true, pending_request_id: expect.any(String), queue_position: 1 });
    const pending = await call('GET', '/deployments/pending?status=pending', e2e.admin);
    expect(pending.json.find((p: { id: string }) => p.id === queued.json.pending_request_id)).toMatchObject({
      status: 'pending',
      retry_count: 0,
      queued_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
    });

    await setCapacity(1);
    const dispatched = await eventually(
      async () =>
        (await call('GET', '/deployments/pending', e2e.admin)).json.find(
          (p: { id: string }) => p.id === queued.json.pending_request_id,
        ),
      (p) => p.status === 'dispatched',
    );
    expect(dispatched).toMatchObject({
      deployment_id: expect.any(String),
      dispatched_to_instance_id: 'instance-1',
      dispatched_at: expect.any(String),
    });
    expect((await call('GET', `/deployments/${dispatched.deployment_id}`, e2e.admin)).json).toMatchObject({
      state: 'running',
      config: { priority: 5 },
    });
    expect((await call('DELETE', `/deployments/pending/${dispatched.id}`, e2e.admin)).status).toBe(409);

    // Redeploy: the same configuration, variables merged, a new deployment pointing at the original
    await call('POST', `/deployments/${dispatched.deployment_id}/cancel`, e2e.admin, {});
    const redeployed = await call('POST', `/deployments/${dispatched.deployment_id}/redeploy`, e2e.admin, {
      variables: { WHO: 'again' },
      priority: 7,
    });
    expect(redeployed.status).toBe(201);
    expect(redeployed.json).toMatchObject({
      source_deployment_id: dispatched.deployment_id,
      state: 'running',
      plan: null,
      config: { priority: 7, variables: { WHO: 'again' } },
    });
    expect((await call('POST', '/deployments/nope/redeploy', e2e.admin, {})).status).toBe(404);
    await cancelAllRunning();
  });

  // 20 creates, then three hand-overs through SQS: about 25 s on a loaded 2-core machine.
  it(
    'runs exactly one of 20 concurrent creates with capacity 1, then each waiting one once, in priority order',
    { timeout: 120_000 },
    async () => {
      // Prepare
      await setCapacity(1);
      // Act
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => deployWeb({ priority: i % 4 })));
      // Assess
      expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array(19).fill(202)]);
      const waiting = (await call('GET', '/deployments/pending?status=pending', e2e.admin)).json;
      expect(waiting).toHaveLength(19);

      const order: string[] = [];
      for (let round = 0; round < 3; round += 1) {
        await cancelAllRunning();
        const running = await eventually(
          async () => (await call('GET', '/deployments?status=running', e2e.admin)).json.data as { id: string }[],
          (data) => data.length === 1,
        );
        order.push(running[0]!.id);
      }
      const started = await Promise.all(
        order.map(async (id) => (await call('GET', `/deployments/${id}`, e2e.admin)).json.config.priority),
      );
      expect(started).toEqual([3, 3, 3]);
      const requests = (await call('GET', '/deployments/pending', e2e.admin)).json.filter(
        (p: { status: string }) => p.status === 'dispatched',
      );
      expect(new Set(requests.map((p: { deployment_id: string }) => p.deployment_id)).size).toBe(requests.length);

      // A pending request can be deleted (200, empty body); a missing one answers 404
      const next = (await call('GET', '/deployments/pending?status=pending', e2e.admin)).json[0];
      const deleted = await call('DELETE', `/deployments/pending/${next.id}`, e2e.admin);
      expect([deleted.status, deleted.json]).toEqual([200, undefined]);
      expect(
        (await call('DELETE', '/deployments/pending/3f1e5a4c-0000-4000-8000-000000000000', e2e.admin)).status,
      ).toBe(404);
      for (const p of (await call('GET', '/deployments/pending?status=pending', e2e.admin)).json)
        await call('DELETE', `/deployments/pending/${p.id}`, e2e.admin);
      await cancelAllRunning();
      await setCapacity(4);
    },
  );
});
