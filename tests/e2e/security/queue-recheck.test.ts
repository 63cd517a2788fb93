// Attack: queue work while it is allowed, then let it start after it no longer is. A request queued before a
// freeze (or by a user who is deactivated meanwhile) must not start just because it was queued earlier: at
// dispatch the freeze holds it (it waits, saying why and until when, without blocking the requests behind it) and
// a deactivated user's request fails. When the freeze goes, the sweep dispatches it without any client call.
import { describe, expect, it } from 'vitest';
import { apiClient } from '../../support/http.js';
import { useStackWithAgents } from '../../support/stack-with-agents.js';
import { createUser } from '../../support/users.js';

const e2e = useStackWithAgents('recheck', { env: { SWEEP_INTERVAL_MS: '1000' } });
const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = e2e.admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

/** The pending list entry of a request, once `done` holds for it (polled). */
const requestWhen = async (id: string, done: (r: Record<string, unknown>) => boolean, withinMs = 30_000) => {
  const until = Date.now() + withinMs;
  for (;;) {
    const found = ((await call('GET', '/deployments/pending')).json as Record<string, unknown>[]).find(
      (r) => r['id'] === id,
    );
    if (found !== undefined && done(found)) return found;
    if (Date.now() > until) throw new Error(`request ${id} is still ${JSON.stringify(found)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
const queued = async (body: Record<string, unknown>, token = e2e.admin): Promise<string> => {
  const reply = await call('POST', '/deployments', body, token);
  expect([reply.status, reply.json.pending]).toEqual([202, true]);
  return reply.json.pending_request_id as string;
};

describe('queued work is re-checked when it starts', () => {
  it(
    'a freeze created after queueing holds the request (with its reason) while the one behind it runs; deleting the freeze lets it start',
    { timeout: 120_000 },
    async () => {
      // Prepare: an action, a solution of it, no capacity.
      const action = (
        await call('POST', '/actions', {
          slug: 'recheck-act',
          name: 'Recheck',
          version: { version: '1.0.0', script: 'sleep 1' },
        })
      ).json.id as string;
      const sequence = (await call('POST', '/sequences', { name: 'recheck-seq', steps: [{ action_id: action }] })).json
        .id as string;
      const solution = (
        await call('POST', '/solutions', { name: 'recheck-sol', sequences: [{ sequence_id: sequence }] })
      ).json.id as string;
      expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
      const target = { target_tags: [{ key: 'role', value: 'web' }] };
      const frozen = await queued({ solution_id: solution, ...target });
      const end = new Date(Date.now() + 3_600_000).toISOString();
      const freeze = await call('POST', '/deployment-freezes', {
        name: 'Year end',
        start_time: new Date(Date.now() - 60_000).toISOString(),
        end_time: end,
        solution_id: solution,
      });
      expect(freeze.status).toBe(201);
      const behind = await queued({ action_id: action, ...target });
      // Act: capacity comes back.
      expect((await call('PUT', '/admin/orchestration', { instances: 2 })).status).toBe(200);
      // Assess: the unfrozen request behind starts, the frozen one waits and says why and until when.
      expect(await requestWhen(behind, (r) => r['status'] === 'dispatched')).toMatchObject({
        deployment_id: expect.any(String),
      });
      const waiting = await requestWhen(frozen, (r) => r['waiting_reason'] !== undefined);
      const until = `${end.slice(0, 19)}+00:00`;
      expect(waiting).toMatchObject({
        status: 'pending',
        waiting_reason: `Deployment freeze 'Year end' is active until ${until}`,
        waiting_until: until,
      });
      await new Promise((resolve) => setTimeout(resolve, 2_500)); // a few sweeps later it still waits
      expect(await requestWhen(frozen, () => true)).toMatchObject({ status: 'pending' });
      // Act: the freeze ends (deleted); nobody calls anything else.
      expect((await call('DELETE', `/deployment-freezes/${freeze.json.id}`)).status).toBe(204);
      // Assess: the sweep wakes the dispatcher, which starts it.
      const started = await requestWhen(frozen, (r) => r['status'] === 'dispatched');
      expect(started['waiting_reason']).toBeUndefined();
    },
  );

  it(
    'the request of a user deactivated while it waited fails with a clear message, and never runs',
    { timeout: 120_000 },
    async () => {
      // Prepare: an operator queues at capacity 0, then is deactivated.
      const action = (
        await call('POST', '/actions', {
          slug: 'recheck-user',
          name: 'Recheck user',
          version: { version: '1.0.0', script: 'echo should-not-run' },
        })
      ).json.id as string;
      const userId = await createUser('leaver@example.com', 'leaver-password', ['operator']);
      const leaver = (await api.login({ email: 'leaver@example.com', password: 'leaver-password' })).token;
      expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
      const request = await queued({ action_id: action, target_tags: [{ key: 'role', value: 'web' }] }, leaver);
      expect((await call('PATCH', `/admin/users/${userId}`, { status: 'inactive' })).status).toBe(200);
      // Act
      expect((await call('PUT', '/admin/orchestration', { instances: 2 })).status).toBe(200);
      // Assess
      const failed = await requestWhen(request, (r) => r['status'] !== 'pending' && r['status'] !== 'processing');
      expect(failed).toMatchObject({
        status: 'failed',
        error_message: 'The user who queued this request is no longer active',
      });
      expect(failed['deployment_id']).toBeUndefined();
    },
  );
});
