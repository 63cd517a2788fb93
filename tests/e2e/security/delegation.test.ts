// The delegation rule over HTTP (issue 29, docs/security.md "Delegated credentials"): an API key, an OAuth access
// token (client credentials or authorization code) and a deploy trigger act with their scopes ∩ their owner's current
// permissions, in the owner's current tenant, and never with a power of the owner's role. Each attack is refused with
// its status and an error envelope, and what it aimed at is read back unchanged.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../../local/agents.js';
import { apiClient } from '../../support/http.js';
import { pageSession } from '../../support/oauth-page.js';
import { createUser } from '../../support/users.js';
import { ADMIN, useStack } from '../../support/stack-fixture.js';

const REDIRECT = 'http://127.0.0.1:8765/callback';
const e2e = useStack('sec-deleg');
let dir: string;
let agents: readonly LocalAgent[] = [];
let actionId: string;

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });
const login = async (email: string, password: string): Promise<string> => (await api.login({ email, password })).token;
const web = { target_tags: [{ key: 'role', value: 'web' }] };
const deploymentCount = async (): Promise<number> =>
  (await call('GET', '/deployments?limit=1', e2e.admin)).json.meta.total;
const finished = async (id: string, withinMs = 40_000) => {
  const until = Date.now() + withinMs;
  for (;;) {
    const d = (await call('GET', `/deployments/${id}`, e2e.admin)).json;
    if (['success', 'failed', 'cancelled', 'rolled_back'].includes(d.state)) return d;
    if (Date.now() > until) throw new Error(`deployment still ${d.state}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

/** An API key of the signed-in user with these scopes: the full key. */
const apiKey = async (token: string, scopes: readonly string[]): Promise<string> => {
  const created = await call('POST', '/auth/api-keys', token, { name: `key-${randomUUID().slice(0, 8)}`, scopes });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.full_key as string;
};

/** A confidential client-credentials client made by `token`'s user: its record and secret. */
const ccClient = async (token: string, scopes: readonly string[]) => {
  const created = await call('POST', '/admin/oauth-clients', token, {
    name: `pipeline-${randomUUID().slice(0, 8)}`,
    redirect_uris: ['https://ci.example.com/callback'],
    grant_types: ['client_credentials'],
    scopes,
  });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json as { id: string; client_id: string; client_secret: string; name: string };
};

/** POST /oauth/token with the client's secret (HTTP Basic). */
const tokenRequest = async (clientId: string, secret: string, fields: Record<string, string>) => {
  const response = await fetch(`${e2e.stack.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, json: (await response.json()) as Record<string, string> };
};

const ccToken = async (client: { client_id: string; client_secret: string }, scope: string): Promise<string> => {
  const answer = await tokenRequest(client.client_id, client.client_secret, {
    grant_type: 'client_credentials',
    scope,
  });
  expect(answer.status).toBe(200);
  return answer.json['access_token']!;
};

/** A freeze of everything for the next hour; removed by the returned function. */
const freezeAll = async () => {
  const freeze = await call('POST', '/deployment-freezes', e2e.admin, {
    name: 'release week',
    start_time: new Date(Date.now() - 60_000).toISOString(),
    end_time: new Date(Date.now() + 3_600_000).toISOString(),
  });
  expect(freeze.status).toBe(201);
  return async () => {
    expect((await call('DELETE', `/deployment-freezes/${freeze.json.id}`, e2e.admin)).status).toBe(204);
  };
};

const override = { action_id: '', ...web, override_freeze: true, override_reason: 'hotfix' };

/** A Standard Webhooks call to a trigger, signed with its secret. */
const fire = async (trigger: { id: string; secret: string }, payload: unknown) => {
  const body = JSON.stringify(payload);
  const id = `msg_${randomUUID()}`;
  const at = new Date();
  const response = await fetch(`${e2e.stack.baseUrl}/api/v1/hooks/${trigger.id}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(trigger.secret).sign(id, at, body),
    },
    body,
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers differ by status, as in tests/support/http.ts
  return { status: response.status, json: (await response.json()) as Record<string, any> };
};

const newTrigger = async (token: string) => {
  const created = await call('POST', '/triggers', token, {
    name: `from CI ${randomUUID().slice(0, 8)}`,
    request: { action_id: actionId, ...web },
  });
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json as { id: string; secret: string };
};

beforeAll(async () => {
  const action = await call('POST', '/actions', e2e.admin, {
    slug: 'delegated',
    name: 'Delegated',
    version: { version: '1.0.0', script: 'echo ok', variables: [{ name: 'TOKEN', secret: true }] },
  });
  expect(action.status).toBe(201);
  actionId = action.json.id;
  override.action_id = actionId;
  dir = await mkdtemp(join(tmpdir(), 'deployer-sec-deleg-'));
  agents = await startLocalAgents(e2e.stack, dir, () => undefined);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await rm(dir, { recursive: true, force: true });
});

describe('delegation: a credential never carries a power of its owner’s role', () => {
  it('delegation: an admin’s API key overrides a freeze only when its scopes name freezes:update', async () => {
    // Prepare
    const narrow = await apiKey(e2e.admin, ['deployments:create', 'deployments:read']);
    const wide = await apiKey(e2e.admin, ['deployments:create', 'deployments:read', 'freezes:update']);
    const unfreeze = await freezeAll();
    try {
      const before = await deploymentCount();
      // Act
      const refused = await call('POST', '/deployments', narrow, override);
      const frozen = await call('POST', '/deployments', narrow, { action_id: actionId, ...web });
      const preview = await call('POST', '/deployments/preview', narrow, override);
      // Assess
      expect([refused.status, refused.json.error.code, refused.json.error.details]).toEqual([
        403,
        'INSUFFICIENT_PERMISSIONS',
        { required_role: 'admin', field: 'override_freeze', required_permission: 'freezes:update' },
      ]);
      expect([frozen.status, frozen.json.error.code, frozen.json.error.details.can_override]).toEqual([
        409,
        'DEPLOYMENT_FROZEN',
        false,
      ]);
      expect(preview.status).toBe(200);
      expect(preview.json.warnings).toContain(
        'override_freeze needs the admin role (an API key, OAuth token or trigger also needs the freezes:update scope): creating this deployment would answer 403.',
      );
      expect(await deploymentCount()).toBe(before);
      // the same admin's key that names the permission may step around the freeze
      const allowed = await call('POST', '/deployments', wide, override);
      expect([allowed.status, allowed.json.error]).toEqual([201, undefined]);
      expect(allowed.json.deployment.freeze_override).toMatchObject({ reason: 'hotfix' });
      expect(await deploymentCount()).toBe(before + 1);
      await finished(allowed.json.deployment_id);
    } finally {
      await unfreeze();
    }
  });

  it('delegation: a client-credentials token of an admin’s client overrides a freeze only with freezes:update in its scope', async () => {
    // Prepare
    const client = await ccClient(e2e.admin, ['deployments:create', 'deployments:read', 'freezes:update']);
    const narrow = await ccToken(client, 'deployments:create deployments:read');
    const wide = await ccToken(client, 'deployments:create deployments:read freezes:update');
    const unfreeze = await freezeAll();
    try {
      const before = await deploymentCount();
      // Act
      const refused = await call('POST', '/deployments', narrow, override);
      // Assess
      expect([refused.status, refused.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
      expect(await deploymentCount()).toBe(before);
      const allowed = await call('POST', '/deployments', wide, override);
      expect([allowed.status, allowed.json.error]).toEqual([201, undefined]);
      await finished(allowed.json.deployment_id);
    } finally {
      await unfreeze();
    }
  });

  it('delegation: an authorization-code token carries no admin power the consent did not name, and the consent page names it', async () => {
    // Prepare: a public client of the admin's; the admin signs in on the page and consents
    const created = await call('POST', '/admin/oauth-clients', e2e.admin, {
      name: 'Release dashboard',
      grant_types: ['authorization_code'],
      redirect_uris: [REDIRECT],
      scopes: ['deployments:create', 'deployments:read', 'freezes:update'],
      is_confidential: false,
    });
    expect(created.status).toBe(201);
    const consentFor = async (scope: string) => {
      const verifier = randomBytes(32).toString('base64url');
      const page = pageSession(() => e2e.stack.baseUrl);
      const opened = await page.open({
        response_type: 'code',
        client_id: created.json.client_id,
        redirect_uri: REDIRECT,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        state: 'st',
        scope,
      });
      expect(opened.status).toBe(200);
      const consent = await page.post({ ...opened.hidden, email: ADMIN.email, password: ADMIN.password });
      expect(consent.status).toBe(200);
      return { page, consent, verifier };
    };
    // Act
    const narrow = await consentFor('deployments:create deployments:read');
    const wide = await consentFor('deployments:create deployments:read freezes:update');
    const allowed = await narrow.page.post({ ...narrow.consent.hidden, decision: 'allow' });
    const code = new URL(allowed.location!).searchParams.get('code')!;
    const exchanged = await fetch(`${e2e.stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: created.json.client_id,
        code_verifier: narrow.verifier,
      }),
    });
    const token = ((await exchanged.json()) as { access_token: string }).access_token;
    const unfreeze = await freezeAll();
    try {
      const before = await deploymentCount();
      const refused = await call('POST', '/deployments', token, override);
      const me = await call('GET', '/auth/me', token);
      // Assess
      expect(narrow.consent.html).not.toContain('role-powers');
      expect(wide.consent.html).toContain('data-testid="role-powers"');
      expect(wide.consent.html).toContain('Deploy during an active deployment freeze (override the freeze)');
      expect(wide.consent.html).toContain('Because you hold the admin role');
      expect(exchanged.status).toBe(200);
      expect([refused.status, refused.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
      expect(await deploymentCount()).toBe(before);
      expect([me.json.roles, me.json.permissions, me.json.credential]).toEqual([
        [],
        ['deployments:create', 'deployments:read'],
        {
          type: 'oauth_token',
          id: created.json.client_id,
          name: 'Release dashboard',
          scopes: ['deployments:create', 'deployments:read'],
        },
      ]);
    } finally {
      await unfreeze();
    }
  });

  it('delegation: an admin’s API key (even with all 57 scopes) reuses no other user’s secret on redeploy; an admin session does', async () => {
    // Prepare: rita deploys with a secret
    const role = await call('POST', '/admin/roles', e2e.admin, {
      name: 'redeployer',
      description: 'creates, redeploys',
    });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, e2e.admin, {
      permissions: ['deployments:create', 'deployments:redeploy', 'deployments:read', 'actions:read', 'targets:read'],
    });
    await createUser('rita@example.com', 'rita-password', ['redeployer']);
    const rita = await login('rita@example.com', 'rita-password');
    const first = await call('POST', '/deployments', rita, { action_id: actionId, ...web, variables: { TOKEN: 's3' } });
    expect(first.status).toBe(201);
    await finished(first.json.deployment_id);
    const narrow = await apiKey(e2e.admin, ['deployments:redeploy', 'deployments:read']);
    const all = (await call('GET', '/admin/permissions', e2e.admin)).json as { permissions: { name: string }[] }[];
    const whole = await apiKey(
      e2e.admin,
      all.flatMap((g) => g.permissions.map((p) => p.name)),
    );
    const before = await deploymentCount();
    // Act
    const byNarrow = await call('POST', `/deployments/${first.json.deployment_id}/redeploy`, narrow, {});
    const byWhole = await call('POST', `/deployments/${first.json.deployment_id}/redeploy`, whole, {});
    // Assess
    for (const reply of [byNarrow, byWhole]) {
      expect([reply.status, reply.json.error.code, reply.json.error.details.fields]).toEqual([
        400,
        'VALIDATION_ERROR',
        [
          {
            field: 'variables.TOKEN',
            code: 'VALIDATION_ERROR',
            message:
              'Secret variable TOKEN must be given again: only the original triggerer, or an admin signed in as a user (not with an API key, OAuth token or trigger), may reuse it',
          },
        ],
      ]);
    }
    expect(await deploymentCount()).toBe(before);
    const bySession = await call('POST', `/deployments/${first.json.deployment_id}/redeploy`, e2e.admin, {});
    expect([bySession.status, bySession.json.error]).toEqual([201, undefined]);
    await finished(bySession.json.id);
  });

  it('delegation: an admin’s key with all 57 scopes still cannot change the shared orchestration capacity (user login only)', async () => {
    // Prepare
    const all = (await call('GET', '/admin/permissions', e2e.admin)).json as { permissions: { name: string }[] }[];
    const whole = await apiKey(
      e2e.admin,
      all.flatMap((g) => g.permissions.map((p) => p.name)),
    );
    const before = (await call('GET', '/admin/orchestration', e2e.admin)).json.instances;
    // Act
    const reply = await call('PUT', '/admin/orchestration', whole, { instances: before + 3 });
    // Assess
    expect([reply.status, reply.json.error.code, reply.json.error.details.reason]).toEqual([
      403,
      'FORBIDDEN',
      'user_credentials_required',
    ]);
    expect((await call('GET', '/admin/orchestration', e2e.admin)).json.instances).toBe(before);
  });
});

describe('delegation: GET /auth/me answers what the credential acts with', () => {
  it('delegation: a scoped key and a client token list only their effective permissions, no admin role, and name the credential', async () => {
    // Prepare
    const keyCreated = await call('POST', '/auth/api-keys', e2e.admin, {
      name: 'reader',
      scopes: ['deployments:read'],
    });
    const key = keyCreated.json.full_key as string;
    const client = await ccClient(e2e.admin, ['deployments:read']);
    const token = await ccToken(client, 'deployments:read');
    const all = (await call('GET', '/admin/permissions', e2e.admin)).json as { permissions: { name: string }[] }[];
    const whole = await apiKey(
      e2e.admin,
      all.flatMap((g) => g.permissions.map((p) => p.name)),
    );
    // Act
    const byKey = await call('GET', '/auth/me', key);
    const byToken = await call('GET', '/auth/me', token);
    const bySession = await call('GET', '/auth/me', e2e.admin);
    const byWhole = await call('GET', '/auth/me', whole);
    // Assess
    expect([byKey.status, byKey.json.email, byKey.json.roles, byKey.json.permissions, byKey.json.credential]).toEqual([
      200,
      ADMIN.email,
      [],
      ['deployments:read'],
      { type: 'api_key', id: keyCreated.json.api_key.id, name: 'reader', scopes: ['deployments:read'] },
    ]);
    expect([byToken.status, byToken.json.roles, byToken.json.permissions, byToken.json.credential]).toEqual([
      200,
      [],
      ['deployments:read'],
      { type: 'oauth_token', id: client.client_id, name: client.name, scopes: ['deployments:read'] },
    ]);
    expect([bySession.json.roles, bySession.json.permissions.length, bySession.json.credential]).toEqual([
      ['admin'],
      57,
      null,
    ]);
    expect([byWhole.json.roles, byWhole.json.permissions.length, byWhole.json.credential.type]).toEqual([
      ['admin'],
      57,
      'api_key',
    ]);
  });
});

describe('delegation: an OAuth client is re-keyed or repointed only by who stands in for its creator', () => {
  it('delegation: a user with oauth_clients:update and the client’s scopes cannot rotate, add a grant type to, or repoint an admin’s client', async () => {
    // Prepare: mallory manages clients and holds the client's only scope
    const role = await call('POST', '/admin/roles', e2e.admin, {
      name: 'client-keeper',
      description: 'manages clients',
    });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, e2e.admin, {
      permissions: ['oauth_clients:read', 'oauth_clients:update', 'deployments:read'],
    });
    await createUser('mallory@example.com', 'mallory-password', ['client-keeper']);
    const mallory = await login('mallory@example.com', 'mallory-password');
    const client = await ccClient(e2e.admin, ['deployments:read']);
    const before = (await call('GET', `/admin/oauth-clients/${client.id}`, e2e.admin)).json;
    // Act
    const attempts = await Promise.all([
      call('POST', `/admin/oauth-clients/${client.id}/rotate-secret`, mallory),
      call('PATCH', `/admin/oauth-clients/${client.id}`, mallory, {
        grant_types: ['client_credentials', 'authorization_code'],
      }),
      call('PATCH', `/admin/oauth-clients/${client.id}`, mallory, { redirect_uris: ['https://attacker.example/cb'] }),
    ]);
    // Assess
    for (const reply of attempts)
      expect([reply.status, reply.json.error.code, reply.json.error.details.reason]).toEqual([
        403,
        'FORBIDDEN',
        'client_creator_required',
      ]);
    expect((await call('GET', `/admin/oauth-clients/${client.id}`, e2e.admin)).json).toEqual(before);
    // the old secret still gets tokens, and its tokens act as the admin's narrow client, never as the admin
    const token = await ccToken(client, 'deployments:read');
    expect((await call('GET', '/auth/me', token)).json.roles).toEqual([]);
    // renaming takes nothing and stays open to a manager
    const renamed = await call('PATCH', `/admin/oauth-clients/${client.id}`, mallory, { name: 'renamed' });
    expect([renamed.status, renamed.json.name]).toEqual([200, 'renamed']);
    // another global admin stands in for the creator
    await createUser('ada@example.com', 'ada-password', ['admin']);
    const ada = await login('ada@example.com', 'ada-password');
    const rotated = await call('POST', `/admin/oauth-clients/${client.id}/rotate-secret`, ada);
    expect(rotated.status).toBe(200);
    const old = await tokenRequest(client.client_id, client.client_secret, { grant_type: 'client_credentials' });
    expect(old.status).toBe(401);
  });
});

describe('delegation: a trigger acts with what creating its deployment needs, as its owner is now', () => {
  it('delegation: an admin’s trigger cannot step around a freeze (409, can_override false), and starts nothing', async () => {
    // Prepare
    const trigger = await newTrigger(e2e.admin);
    const unfreeze = await freezeAll();
    try {
      const before = await deploymentCount();
      // Act
      const fired = await fire(trigger, {});
      // Assess
      expect([fired.status, fired.json.error?.code, fired.json.error?.details?.can_override]).toEqual([
        409,
        'DEPLOYMENT_FROZEN',
        false,
      ]);
      expect(await deploymentCount()).toBe(before);
    } finally {
      await unfreeze();
    }
  });

  it('delegation: a trigger whose owner lost deployments:create is refused, and starts nothing', async () => {
    // Prepare: a plain user's trigger; then the user's roles are taken away
    const id = await createUser('tom@example.com', 'tom-password', ['user']);
    const tom = await login('tom@example.com', 'tom-password');
    const trigger = await newTrigger(tom);
    const works = await fire(trigger, {});
    expect(works.status).toBe(201);
    await finished(works.json.deployment_id);
    expect((await call('PATCH', `/admin/users/${id}`, e2e.admin, { roles: [] })).status).toBe(200);
    const before = await deploymentCount();
    // Act
    const fired = await fire(trigger, {});
    // Assess
    expect([fired.status, fired.json.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(await deploymentCount()).toBe(before);
  });

  it('delegation: a trigger whose owner moved to another tenant acts in the new tenant, not the old scope', async () => {
    // Prepare: a global user's trigger deploys to the global targets; then the user is moved into a tenant, where no
    // target carries the tag: the trigger resolves its request in the new tenant and is refused (400), starting nothing
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Moved', slug: `moved-${Date.now()}` });
    const id = await createUser('moe@example.com', 'moe-password', ['user']);
    const moe = await login('moe@example.com', 'moe-password');
    const trigger = await newTrigger(moe);
    const works = await fire(trigger, {});
    expect([works.status, works.json.deployment?.tenant_id]).toEqual([201, null]);
    await finished(works.json.deployment_id);
    expect((await call('PATCH', `/admin/users/${id}`, e2e.admin, { tenant_id: tenant.json.id })).status).toBe(200);
    const before = await deploymentCount();
    // Act
    const fired = await fire(trigger, {});
    // Assess
    expect([fired.status, fired.json.error?.code, fired.json.error?.details?.fields?.[0]?.field]).toEqual([
      400,
      'VALIDATION_ERROR',
      'target_tags',
    ]);
    expect(fired.json.error.message).toContain("no target of tenant 'Moved' carries role=web");
    expect(await deploymentCount()).toBe(before);
  });
});
