// Outgoing webhooks over HTTP with the local agents: a receiver started here verifies every call with the
// `standardwebhooks` package; a real deployment produces created, started and succeeded in order; a receiver that
// fails then recovers gets the same webhook-id again; one that always fails gets its subscription disabled with a
// reason (the retry schedule scaled to seconds); redeliver and the test ping; SSRF attempts refused; permissions
// (tenants:update, each event type's read permission, API key scopes, tenants) enforced; the secret shown once.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
let admin: string;
let dir: string;
let agents: readonly LocalAgent[] = [];
let actionId: string;
const logs: string[] = [];

interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly at: number;
}
const received: Received[] = [];
let receiver: Server;
let receiverUrl: string;
/** Per path: the status to answer to the nth call of one webhook-id (1-based). */
const behaviour: Record<string, (nth: number) => number> = {
  '/ok': () => 200,
  '/flaky': (nth) => (nth === 1 ? 500 : 200),
  '/down': () => 500,
  '/slack': () => 200,
  '/ping': () => 204,
  '/queue': () => 200,
  '/first': () => 200,
};

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });

const until = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 40_000) => {
  for (const end = Date.now() + ms; Date.now() < end;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const seen = received.map((r) => `${r.path} ${r.headers['webhook-id']} ${r.body.slice(0, 60)}`);
  throw new Error(`timed out waiting for ${what}; received:\n${seen.join('\n')}`);
};

const subscribe = async (token: string, path: string, extra: Record<string, unknown> = {}) => {
  const created = await call('POST', '/webhooks', token, {
    url: `${receiverUrl}${path}`,
    event_types: ['deployment.created', 'deployment.started', 'deployment.succeeded', 'deployment.failed'],
    ...extra,
  });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json as { id: string; secret: string; url: string };
};

const deploy = async (token = admin) => {
  const created = await call('POST', '/deployments', token, {
    action_id: actionId,
    target_tags: [{ key: 'role', value: 'web' }],
    variables: { TOKEN: 'hunter2-deploy-secret' },
  });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.deployment_id as string;
};

const events = (path: string, secret: string) =>
  received
    .filter((r) => r.path === path)
    .map((r) => ({
      id: r.headers['webhook-id']!,
      event: new Webhook(secret).verify(r.body, r.headers) as {
        type: string;
        timestamp: string;
        version: number;
        data: Record<string, unknown>;
      },
    }));

beforeAll(async () => {
  receiver = createServer((request, response) => {
    void readBody(request).then((body) => {
      const path = request.url ?? '/';
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      received.push({ path, headers, body, at: Date.now() });
      const nth = received.filter((r) => r.path === path && r.headers['webhook-id'] === headers['webhook-id']).length;
      response.writeHead((behaviour[path] ?? (() => 404))(nth), { 'content-type': 'text/plain' });
      response.end(`answer ${nth} from ${path} \u001b[31m<b>bold</b>`);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('hook')}-`,
    bootstrapAdmin: ADMIN,
    log: (line) => logs.push(line),
    // The day of retries in about 8 s. The emitters' cache of who listens holds 5 minutes (the most allowed): an
    // event is heard only if the cache rule lets a subscription reach work created after its answer (issue 30).
    env: { WEBHOOK_RETRY_SCALE: '0.0001', WEBHOOK_CACHE_SECONDS: '300' },
  });
  admin = (await api.login(ADMIN)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-hook-'));
  agents = await startLocalAgents(stack, dir, () => undefined);
  const action = await call('POST', '/actions', admin, {
    slug: 'notify-me',
    name: 'Notify me',
    version: {
      version: '1.0.0',
      script: 'echo "deploying"',
      variables: [{ name: 'TOKEN', secret: true }],
    },
  });
  expect(action.status).toBe(201);
  actionId = action.json.id;
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('a subscription and the work created after it (issue 30)', () => {
  it('hears the first events of a deployment created right after the subscription answered', async () => {
    // Prepare: a deployment nobody listens to, so every emitter has cached "nobody listens" for 5 minutes
    const unheard = await deploy();
    await until('the unheard deployment’s end', async () => {
      const got = await call('GET', `/deployments/${unheard}`, admin);
      return got.json.state === 'success' ? got : undefined;
    });

    // Act: subscribe, and deploy as soon as it answers (a CI script)
    const first = await subscribe(admin, '/first');
    const deploymentId = await deploy();
    const got = await until('the three events of the deployment created after the subscription', () => {
      const list = events('/first', first.secret).filter((e) => e.event.data['id'] === deploymentId);
      return list.length >= 3 ? list : undefined;
    });

    // Assess: all of them, and nothing of the deployment before the subscription
    expect(got.map((e) => e.event.type)).toEqual(['deployment.created', 'deployment.started', 'deployment.succeeded']);
    expect(events('/first', first.secret).filter((e) => e.event.data['id'] === unheard)).toEqual([]);
    // People, not ids: the payload names who triggered it beside the id
    expect(got[2]?.event.data).toMatchObject({ triggered_by_name: 'Administrator' });
    expect(typeof got[2]?.event.data['triggered_by']).toBe('string');
    expect((await call('DELETE', `/webhooks/${first.id}`, admin)).status).toBe(204);
  }, 90_000);

  it('names the person behind a deployment, also when an API key of theirs created it (list, get)', async () => {
    // Prepare
    const me = (await call('GET', '/auth/me', admin)).json as { id: string };
    const key = await call('POST', '/auth/api-keys', admin, {
      name: 'ci',
      scopes: ['deployments:create', 'deployments:read'],
    });
    expect(key.status).toBe(201);

    // Act
    const byKey = await deploy(key.json.full_key as string);
    const got = await call('GET', `/deployments/${byKey}`, admin);
    const list = await call('GET', '/deployments?limit=100', admin);

    // Assess: the owner's display name beside the owner's id, in the detail and the list item
    expect(got.json).toMatchObject({ triggered_by: me.id, triggered_by_name: 'Administrator' });
    const item = list.json.data.find((d: { id: string }) => d.id === byKey);
    expect(item).toMatchObject({ triggered_by: me.id, triggered_by_name: 'Administrator' });
    // ended before the next tests subscribe (they count the events of their own deployments only)
    await until('the key’s deployment’s end', async () => {
      const now = await call('GET', `/deployments/${byKey}`, admin);
      return now.json.state === 'success' ? now : undefined;
    });
  }, 60_000);
});

describe('outgoing webhooks', () => {
  let ok: { id: string; secret: string };
  let flaky: { id: string; secret: string };
  let down: { id: string; secret: string };
  let slack: { id: string; secret: string };
  let deploymentId: string;

  it('delivers a real deployment’s created, started and succeeded, signed, in order, its secrets masked', async () => {
    // Prepare
    ok = await subscribe(admin, '/ok');
    flaky = await subscribe(admin, '/flaky', { event_types: ['deployment.succeeded'] });
    down = await subscribe(admin, '/down');
    slack = await subscribe(admin, '/slack', { format: 'slack', event_types: ['deployment.succeeded'] });
    expect(ok.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    // Act
    deploymentId = await deploy();
    const got = await until('three events', () => {
      const list = events('/ok', ok.secret).filter((e) => e.event.data['id'] === deploymentId);
      return list.length >= 3 ? list : undefined;
    });

    // Assess
    expect(got.map((e) => e.event.type)).toEqual(['deployment.created', 'deployment.started', 'deployment.succeeded']);
    expect(new Set(got.map((e) => e.id)).size).toBe(3);
    expect(got.every((e) => e.event.version === 1)).toBe(true);
    expect(got[2]?.event.data).toMatchObject({
      id: deploymentId,
      state: 'success',
      config: { variables: { TOKEN: '***' } },
    });
    expect(JSON.stringify(received)).not.toContain('hunter2');
    const slackCall = await until('the Slack message', () =>
      received.find((r) => r.path === '/slack' && r.body.includes(deploymentId)),
    );
    expect(JSON.parse(slackCall.body)).toMatchObject({
      text: expect.stringContaining('Deployment Notify me'),
      blocks: [{ text: { text: expect.stringContaining(`/api/v1/deployments/${deploymentId}|`) } }, {}],
    });
  }, 60_000);

  it('retries a receiver that failed with the same webhook-id, and logs each attempt', async () => {
    // Act
    // Only this describe's deployment: one of an earlier test that ends after the subscription answered is heard too
    const ours = (r: { body: string }) => (JSON.parse(r.body) as { data: { id?: string } }).data.id === deploymentId;
    const calls = await until('the retry', () => {
      const list = received.filter((r) => r.path === '/flaky' && ours(r));
      return list.length >= 2 ? list : undefined;
    });

    // Assess
    expect(calls[0]?.headers['webhook-id']).toBe(calls[1]?.headers['webhook-id']);
    const log = await until('the delivered log entry', async () => {
      const page = await call('GET', `/webhooks/${flaky.id}/deliveries`, admin);
      const entry = page.json.data.find((d: { id: string }) => d.id === calls[0]?.headers['webhook-id']);
      return entry?.state === 'delivered' ? entry : undefined;
    });
    expect(log).toMatchObject({
      id: calls[0]?.headers['webhook-id'],
      event_type: 'deployment.succeeded',
      attempt: 2,
      status_code: 200,
      response_excerpt: 'answer 2 from /flaky [31m<b>bold</b>',
      attempts: [
        { attempt: 1, status_code: 500 },
        { attempt: 2, status_code: 200 },
      ],
    });
  });

  it('disables a subscription whose receiver keeps failing, and says why', async () => {
    // Act: a second deployment makes six deliveries to /down in all, each failing every attempt
    await deploy();
    const disabled = await until(
      'the subscription disabled',
      async () => {
        const got = await call('GET', `/webhooks/${down.id}`, admin);
        return got.json.enabled === false ? got.json : undefined;
      },
      60_000,
    );

    // Assess
    expect(disabled.disabled_reason).toMatch(
      /^5 deliveries in a row failed after every attempt \(the last: The receiver answered 500\.\)/,
    );
    const page = await call('GET', `/webhooks/${down.id}/deliveries?limit=100`, admin);
    expect(
      page.json.data.some((d: { state: string; attempt: number }) => d.state === 'failed' && d.attempt === 8),
    ).toBe(true);
    const again = await call('PATCH', `/webhooks/${down.id}`, admin, { enabled: true });
    expect(again.json).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
  }, 90_000);

  it('sends a test ping, and redelivers a delivery with the same webhook-id', async () => {
    // Prepare
    const pinged = await subscribe(admin, '/ping', { event_types: ['target.online'] });

    // Act
    const test = await call('POST', `/webhooks/${pinged.id}/test`, admin);
    const first = await until('the ping', () => events('/ping', pinged.secret)[0]);
    const delivered = await until('the ping delivered', async () => {
      const page = await call('GET', `/webhooks/${pinged.id}/deliveries`, admin);
      return page.json.data[0]?.state === 'delivered' ? page.json.data[0] : undefined;
    });
    const redelivered = await call('POST', `/webhooks/${pinged.id}/deliveries/${delivered.id}/redeliver`, admin);
    const second = await until('the redelivery', () => events('/ping', pinged.secret)[1]);

    // Assess
    expect(test.status).toBe(202);
    expect(first.event).toMatchObject({ type: 'ping', version: 1, data: { webhook_id: pinged.id } });
    expect(redelivered.status).toBe(202);
    expect(second.id).toBe(first.id);
    const busy = await call('POST', `/webhooks/${pinged.id}/deliveries/msg_${'0'.repeat(32)}/redeliver`, admin);
    expect(busy.status).toBe(404);
  });

  it('tells a queued request, its dispatch, a failure and its analysis', async () => {
    // Prepare
    const watcher = await subscribe(admin, '/queue', {
      event_types: ['pending_request.queued', 'pending_request.dispatched', 'deployment.failed', 'analysis.completed'],
    });
    const failing = await call('POST', '/actions', admin, {
      slug: 'fails',
      name: 'Fails',
      version: { version: '1.0.0', script: 'echo "npm ERR! missing script: build" >&2; exit 3' },
    });
    expect(failing.status).toBe(201);

    // Act: no instance free, so the create queues; then one is
    expect((await call('PUT', '/admin/orchestration', admin, { instances: 0 })).status).toBe(200);
    const queued = await call('POST', '/deployments', admin, {
      action_id: failing.json.id,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    expect(queued.status).toBe(202);
    expect((await call('PUT', '/admin/orchestration', admin, { instances: 4 })).status).toBe(200);
    // Each event is its own delivery: the analysis (asked for when the command completed) may arrive before the
    // deployment's end (sent when the engine's next pass wrote it), so the wait is for all four.
    const wanted = ['pending_request.queued', 'pending_request.dispatched', 'deployment.failed', 'analysis.completed'];
    const got = await until('the four events', () => {
      const list = events('/queue', watcher.secret);
      return wanted.every((type) => list.some((e) => e.event.type === type)) ? list : undefined;
    });

    // Assess
    const byType = Object.fromEntries(got.map((e) => [e.event.type, e.event.data]));
    expect(byType['pending_request.queued']).toMatchObject({
      id: queued.json.pending_request_id,
      status: 'pending',
      triggered_by_name: 'Administrator',
    });
    expect(byType['pending_request.dispatched']).toMatchObject({
      id: queued.json.pending_request_id,
      status: 'dispatched',
    });
    const deploymentId = byType['pending_request.dispatched']?.['deployment_id'];
    expect(byType['deployment.failed']).toMatchObject({ id: deploymentId, state: 'failed' });
    expect(byType['analysis.completed']).toMatchObject({ deployment_id: deploymentId, status: 'completed' });
    expect(new Set(got.map((e) => e.id)).size).toBe(got.length);
  }, 60_000);

  it('refuses internal and plain-http URLs at create (SSRF)', async () => {
    for (const url of [
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.7/hook',
      'https://[fd00::1]/hook',
      'http://example.com/hook',
      'ftp://example.com/hook',
    ]) {
      const refused = await call('POST', '/webhooks', admin, { url, event_types: ['deployment.created'] });
      expect([url, refused.status, refused.json.error.code]).toEqual([url, 400, 'VALIDATION_ERROR']);
    }
  });

  it('enforces who may subscribe to what, tenants, and shows the secret only once', async () => {
    // Prepare
    await createUser('op@example.com', 'operator-password', ['operator']);
    const operator = (await api.login({ email: 'op@example.com', password: 'operator-password' })).token;
    const role = await call('POST', '/admin/roles', admin, { name: 'hook-admin', description: 'webhooks, no targets' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, admin, {
      permissions: ['tenants:read', 'tenants:update', 'deployments:read', 'api_keys:create'],
    });
    const tenantA = (await call('POST', '/tenants', admin, { name: 'Hooks A', slug: 'hooks-a' })).json.id as string;
    const tenantB = (await call('POST', '/tenants', admin, { name: 'Hooks B', slug: 'hooks-b' })).json.id as string;
    await createUser('ha@example.com', 'hook-admin-password', ['hook-admin'], tenantA);
    await createUser('hb@example.com', 'hook-admin-password', ['hook-admin'], tenantB);
    const userA = (await api.login({ email: 'ha@example.com', password: 'hook-admin-password' })).token;
    const userB = (await api.login({ email: 'hb@example.com', password: 'hook-admin-password' })).token;

    // Act + Assess: an operator holds tenants:read but not tenants:update
    const byOperator = await call('POST', '/webhooks', operator, {
      url: 'https://hooks.example.com/x',
      event_types: ['deployment.created'],
    });
    expect([byOperator.status, byOperator.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    // no targets:read: no target events, nor a change that adds them
    const noTargets = await call('POST', '/webhooks', userA, {
      url: 'https://hooks.example.com/a',
      event_types: ['deployment.created', 'target.offline'],
    });
    expect([noTargets.status, noTargets.json.error.details.missing]).toEqual([403, ['targets:read']]);
    const mine = await subscribe(userA, '/ok', { event_types: ['deployment.failed'] });
    expect(mine).toMatchObject({ tenant_id: tenantA });
    const widened = await call('PATCH', `/webhooks/${mine.id}`, userA, { event_types: ['analysis.completed'] });
    expect(widened.status).toBe(403);
    // an API key scoped below: refused
    const key = (await call('POST', '/auth/api-keys', userA, { name: 'hooks', scopes: ['tenants:update'] })).json
      .full_key as string;
    const byKey = await call('POST', '/webhooks', key, {
      url: 'https://hooks.example.com/k',
      event_types: ['deployment.created'],
    });
    expect([byKey.status, byKey.json.error.details.missing]).toEqual([403, ['deployments:read']]);
    // another tenant (and a global caller) sees 404
    for (const [method, path] of [
      ['GET', `/webhooks/${mine.id}`],
      ['PATCH', `/webhooks/${mine.id}`],
      ['DELETE', `/webhooks/${mine.id}`],
      ['POST', `/webhooks/${mine.id}/rotate-secret`],
      ['GET', `/webhooks/${mine.id}/deliveries`],
    ] as const) {
      expect((await call(method, path, userB, method === 'PATCH' ? { enabled: false } : undefined)).status).toBe(404);
      expect((await call(method, path, admin, method === 'PATCH' ? { enabled: false } : undefined)).status).toBe(404);
    }
    expect((await call('GET', '/webhooks', userB)).json.data).toEqual([]);
    // the secret: shown at create and rotate only, never read back, never logged
    const listed = await call('GET', '/webhooks', userA);
    const got = await call('GET', `/webhooks/${mine.id}`, userA);
    const rotated = await call('POST', `/webhooks/${mine.id}/rotate-secret`, userA);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(mine.secret);
    for (const text of [listed.text, got.text, (await call('GET', `/webhooks/${mine.id}`, userA)).text])
      expect(text).not.toContain('whsec_');
    const secrets = [ok.secret, flaky.secret, down.secret, slack.secret, mine.secret, rotated.json.secret];
    for (const secret of secrets) {
      expect(logs.join('\n')).not.toContain(secret);
      expect(logs.join('\n')).not.toContain(secret.slice('whsec_'.length));
    }
    // the secrets are sealed and in the encryption index
    const stats = await call('GET', '/admin/encryption/stats', admin);
    const webhooks = stats.json.tables.find((t: { record_type: string }) => t.record_type === 'webhook');
    expect(webhooks.records).toBeGreaterThanOrEqual(6);
    expect((await call('DELETE', `/webhooks/${mine.id}`, userA)).status).toBe(204);
    expect((await call('GET', `/webhooks/${mine.id}`, userA)).status).toBe(404);
  });
});
