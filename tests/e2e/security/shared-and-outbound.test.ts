// Shared settings, outbound requests, webhook URLs and GitHub replays (issue 29, "Delegated power"), attacked over
// HTTP against the local stack with the real agents: a tenant admin pointing every tenant's analysis at their own
// server; provider URLs inside the network; an allowed provider that redirects or fails (its status and body never
// shown); a stored API key following a changed provider URL; webhook URLs (credentials) read without
// tenants:update; a captured GitHub delivery replayed under a new X-GitHub-Delivery. Each attack is refused with
// its status and the error envelope, and what it aimed at is read back unchanged.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../../local/agents.js';
import { startStack, type Stack } from '../../../local/stack.js';
import { uniqueName } from '../../support/aws.js';
import { apiClient } from '../../support/http.js';
import { createUser } from '../../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
let admin: string;
let tenantAdmin: string;
let operator: string;
let dir = '';
let agents: readonly LocalAgent[] = [];

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });

/** A local HTTP server recording what reaches it; `answer` decides the reply. */
interface Recorder {
  readonly server: Server;
  readonly seen: { path: string; authorization: string; body: string }[];
  answer: (res: ServerResponse) => void;
  url: string;
  hostPort: string;
}
const recorder = async (): Promise<Recorder> => {
  const r: Recorder = {
    server: createServer(),
    seen: [],
    answer: (res) => res.writeHead(500).end('down'),
    url: '',
    hostPort: '',
  };
  r.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      r.seen.push({ path: req.url ?? '', authorization: req.headers.authorization ?? '', body });
      r.answer(res);
    });
  });
  await new Promise<void>((done) => r.server.listen(0, '127.0.0.1', done));
  r.hostPort = `127.0.0.1:${(r.server.address() as AddressInfo).port}`;
  r.url = `http://${r.hostPort}/v1`;
  return r;
};
const close = (server: Server | undefined) =>
  new Promise<void>((done) => {
    if (server === undefined) return done();
    server.closeAllConnections();
    server.close(() => done());
  });

/** The provider the analysis settings may name (allowed), a second allowed one, and a port nothing listens on. */
let provider: Recorder;
let elsewhere: Recorder;
let closedHostPort = '';
/** A server the attacker runs (not allowed: loopback, refused). */
let attacker: Recorder;

const PROVIDER_SETTINGS = () => ({
  provider: 'openai_compatible',
  provider_url: provider.url,
  provider_model: 'diagnose-1',
  provider_api_key: 'sk-original-key',
  provider_timeout_seconds: 2,
  fallback_to_rules: false,
});
const SAMPLE = { log: 'E: Unable to locate package nosuchpackage', exit_code: 100 };
const settingsNow = async () => (await call('GET', '/admin/analysis/settings', admin)).json;

beforeAll(async () => {
  provider = await recorder();
  elsewhere = await recorder();
  attacker = await recorder();
  const closed = await recorder();
  closedHostPort = closed.hostPort;
  await close(closed.server);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('outbound')}-`,
    bootstrapAdmin: ADMIN,
    env: { ANALYSIS_ALLOWED_HOSTS: [provider.hostPort, elsewhere.hostPort, closedHostPort].join(',') },
  });
  admin = (await api.login(ADMIN)).token;
  const tenant = (await call('POST', '/tenants', admin, { name: 'Tenant A', slug: 'tenant-a' })).json.id as string;
  await createUser('tenant-admin@example.com', 'tenant-admin-password', ['admin'], tenant);
  tenantAdmin = (await api.login({ email: 'tenant-admin@example.com', password: 'tenant-admin-password' })).token;
  await createUser('operator@example.com', 'operator-password', ['operator']);
  operator = (await api.login({ email: 'operator@example.com', password: 'operator-password' })).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-outbound-'));
  agents = await startLocalAgents(stack, dir, () => undefined);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  await Promise.all([provider, elsewhere, attacker].map((r) => close(r?.server)));
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('shared settings refuse tenant-scoped callers', () => {
  it('a tenant admin cannot change, restore or test the analysis settings every tenant shares (403)', async () => {
    // Arrange
    expect((await call('PUT', '/admin/analysis/settings', admin, { max_retries: 2 })).status).toBe(200);
    const before = await settingsNow();
    // Act
    const put = await call('PUT', '/admin/analysis/settings', tenantAdmin, {
      provider: 'openai_compatible',
      provider_url: 'https://attacker.example.com/v1',
      provider_model: 'steal-1',
    });
    const restore = await call('POST', '/admin/analysis/settings/restore', tenantAdmin);
    const test = await call('POST', '/admin/analysis/test', tenantAdmin, SAMPLE);
    // Assess
    for (const refused of [put, restore, test])
      expect([refused.status, refused.json.error.code, refused.json.error.details.reason]).toEqual([
        403,
        'FORBIDDEN',
        'tenant_restriction',
      ]);
    expect(put.json.error.message).toMatch(/shared by every tenant/);
    expect(await settingsNow()).toEqual(before);
    expect(before).toMatchObject({ provider: 'rules', provider_url: null, max_retries: 2 });
    // (reading them stays open to the tenant admin: analysis:read)
    expect((await call('GET', '/admin/analysis/settings', tenantAdmin)).json).toEqual(before);
    expect((await call('POST', '/admin/analysis/settings/restore', admin)).status).toBe(200);
  });

  it('a tenant admin cannot verify a key of the key ring every tenant shares (403), a global admin can', async () => {
    // Arrange
    const key = `probe:${Buffer.alloc(32, 7).toString('base64')}`;
    // Act
    const byTenant = await call('POST', '/admin/encryption/verify', tenantAdmin, { key });
    const byGlobal = await call('POST', '/admin/encryption/verify', admin, { key });
    // Assess
    expect([byTenant.status, byTenant.json.error.code, byTenant.json.error.details.reason]).toEqual([
      403,
      'FORBIDDEN',
      'tenant_restriction',
    ]);
    expect([byGlobal.status, byGlobal.json.result]).toEqual([200, 'nothing_to_verify']);
  });
});

describe('the analysis provider goes through the SSRF guard', () => {
  it('refuses provider_url values inside the network or over http (400 on provider_url); the settings unchanged', async () => {
    // Arrange
    const before = await settingsNow();
    const seenBefore = attacker.seen.length;
    // Act
    const answers = [];
    for (const url of [
      `http://models.example.com/v1`,
      `https://169.254.169.254/latest/meta-data`,
      `http://${attacker.hostPort}/v1`,
      `https://${attacker.hostPort}/v1`,
      `https://localhost/v1`,
      `https://[::ffff:0:127.0.0.1]/v1`,
      `https://[fd00::1]/v1`,
    ])
      answers.push([
        url,
        await call('PUT', '/admin/analysis/settings', admin, { ...PROVIDER_SETTINGS(), provider_url: url }),
      ] as const);
    // Assess
    for (const [url, answer] of answers)
      expect([url, answer.status, answer.json.error.code, answer.json.error.details.fields[0].field]).toEqual([
        url,
        400,
        'VALIDATION_ERROR',
        'provider_url',
      ]);
    expect(await settingsNow()).toEqual(before);
    expect(attacker.seen.length).toBe(seenBefore);
  });

  it('an allowed provider that redirects, fails or is down is "not 2xx" or "unreachable", never its status or body', async () => {
    // Arrange
    expect((await call('PUT', '/admin/analysis/settings', admin, PROVIDER_SETTINGS())).status).toBe(200);
    const secretBody = 'upstream-body-with-internal-details';
    // Act
    provider.answer = (res) => res.writeHead(302, { location: `${attacker.url}/stolen` }).end(secretBody);
    const redirected = await call('POST', '/admin/analysis/test', admin, SAMPLE);
    provider.answer = (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(secretBody);
    const failed = await call('POST', '/admin/analysis/test', admin, SAMPLE);
    await call('PUT', '/admin/analysis/settings', admin, {
      provider_url: `http://${closedHostPort}/v1`,
      provider_api_key: 'sk-for-nothing',
    });
    const down = await call('POST', '/admin/analysis/test', admin, SAMPLE);
    await call('POST', '/admin/analysis/settings/restore', admin);
    // Assess
    expect([redirected.status, redirected.json.error.code]).toEqual([503, 'EXTERNAL_SERVICE_ERROR']);
    expect(redirected.json.error.message).toContain('(not 2xx)');
    expect([failed.status, failed.json.error.code]).toEqual([503, 'EXTERNAL_SERVICE_ERROR']);
    expect(failed.json.error.message).toContain('(not 2xx)');
    expect([down.status, down.json.error.code]).toEqual([503, 'EXTERNAL_SERVICE_ERROR']);
    expect(down.json.error.message).toContain('(unreachable)');
    for (const answer of [redirected, failed, down]) {
      // The answer without its random request id (a UUID may hold "302" or "500" by chance)
      expect(Object.keys(answer.json.error.details ?? {})).toEqual(['request_id']);
      const shown = answer.text.replace(answer.json.error.details.request_id, '<request id>');
      expect(shown).not.toMatch(/302|500|upstream-body|ECONNREFUSED|location|127\.0\.0\.1/i);
    }
    expect(attacker.seen).toEqual([]); // the redirect was not followed: the key never went along
  });

  it('the stored API key does not follow a changed provider_url (400 on provider_api_key); the settings unchanged', async () => {
    // Arrange
    expect((await call('PUT', '/admin/analysis/settings', admin, PROVIDER_SETTINGS())).status).toBe(200);
    const before = await settingsNow();
    // Act
    const moved = await call('PUT', '/admin/analysis/settings', admin, { provider_url: elsewhere.url });
    provider.answer = (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          choices: [
            {
              message: {
                content:
                  '{"confidence": 0.7, "summary": "no such package", "likely_cause": "typo", "remediation": ["x"]}',
              },
            },
          ],
        }),
      );
    const tested = await call('POST', '/admin/analysis/test', admin, SAMPLE);
    // Assess
    expect([moved.status, moved.json.error.code, moved.json.error.details.fields[0].field]).toEqual([
      400,
      'VALIDATION_ERROR',
      'provider_api_key',
    ]);
    expect(await settingsNow()).toEqual(before);
    expect(tested.json.source).toBe('provider');
    expect(provider.seen.at(-1)?.authorization).toBe('Bearer sk-original-key');
    expect(elsewhere.seen).toEqual([]);
    // Given again, the key moves with the URL.
    expect(
      (
        await call('PUT', '/admin/analysis/settings', admin, {
          provider_url: elsewhere.url,
          provider_api_key: 'sk-for-elsewhere',
        })
      ).json.provider_url,
    ).toBe(elsewhere.url);
    await call('POST', '/admin/analysis/settings/restore', admin);
  });
});

describe('webhook URLs are credentials', () => {
  it('readers without tenants:update see only the scheme and host; tenants:update holders see it whole', async () => {
    // Arrange
    const url = `http://127.0.0.1:9/services/T0000/B0000/secret-slack-token`;
    const created = await call('POST', '/webhooks', admin, {
      url,
      event_types: ['deployment.failed'],
      format: 'slack',
    });
    expect([created.status, created.json.url]).toEqual([201, url]);
    const id = created.json.id as string;
    const readKey = (await call('POST', '/auth/api-keys', admin, { name: 'read-hooks', scopes: ['tenants:read'] })).json
      .full_key as string;
    // Act
    const views = {
      operatorList: await call('GET', '/webhooks', operator),
      operatorGet: await call('GET', `/webhooks/${id}`, operator),
      operatorDeliveries: await call('GET', `/webhooks/${id}/deliveries`, operator),
      keyList: await call('GET', '/webhooks', readKey),
      keyGet: await call('GET', `/webhooks/${id}`, readKey),
    };
    const full = { list: await call('GET', '/webhooks', admin), get: await call('GET', `/webhooks/${id}`, admin) };
    // Assess
    for (const [name, view] of Object.entries(views)) {
      expect([name, view.status]).toEqual([name, 200]);
      expect([name, view.text.includes('secret-slack-token')]).toEqual([name, false]);
    }
    expect(views.operatorList.json.data.find((w: { id: string }) => w.id === id).url).toBe('http://127.0.0.1:9/…');
    expect(views.operatorGet.json.url).toBe('http://127.0.0.1:9/…');
    expect(views.keyGet.json.url).toBe('http://127.0.0.1:9/…');
    expect(full.list.json.data.find((w: { id: string }) => w.id === id).url).toBe(url);
    expect(full.get.json.url).toBe(url);
  });
});

describe('GitHub-signed trigger calls are de-duplicated on what the signature covers', () => {
  it('a captured GitHub delivery replayed under a new X-GitHub-Delivery is 409; one deployment only', async () => {
    // Arrange
    const action = await call('POST', '/actions', admin, {
      slug: 'release',
      name: 'Release',
      version: { version: '1.0.0', script: 'echo "deploying $TAG"', variables: [{ name: 'TAG', default: 'none' }] },
    });
    const trigger = (
      await call('POST', '/triggers', admin, {
        name: 'release from GitHub',
        request: { action_id: action.json.id, target_tags: [{ key: 'role', value: 'web' }] },
        rules: { variables: { TAG: 'release.tag_name' } },
      })
    ).json as { id: string; secret: string };
    const body = JSON.stringify({ action: 'published', release: { tag_name: 'v1.0.0' } });
    const signature = `sha256=${createHmac('sha256', trigger.secret).update(body).digest('hex')}`;
    const send = async (delivery: string) => {
      const response = await fetch(`${stack.baseUrl}/api/v1/hooks/${trigger.id}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'release',
          'x-github-delivery': delivery,
          'x-hub-signature-256': signature,
        },
        body,
      });
      return { status: response.status, json: (await response.json()) as { error?: { code: string } } };
    };
    const count = async () => (await call('GET', '/deployments?limit=100', admin)).json.meta.total as number;
    const before = await count();
    // Act
    const first = await send(randomUUID());
    const replays = [await send(randomUUID()), await send(randomUUID())];
    // Assess
    expect([201, 202]).toContain(first.status);
    for (const replay of replays) expect([replay.status, replay.json.error?.code]).toEqual([409, 'CONFLICT']);
    expect(await count()).toBe(before + 1);
  });
});
