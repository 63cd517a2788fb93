// Admin: OAuth 2.0 clients over HTTP: create (a confidential client's secret once, stored only as a hash), read by id
// and short id, list as a bare array, update, rotate, deactivate; the rules a client's settings must keep; and the
// attacks on the boundary: scopes beyond the caller's, another tenant's clients, callers without the permission.
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('oauthc');

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const login = async (email: string, password: string): Promise<string> => (await api.login({ email, password })).token;

const confidential = {
  name: 'CI pipeline',
  description: 'deploys from CI',
  redirect_uris: ['https://ci.example.com/callback', 'http://127.0.0.1:8123/cb'],
  grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
  scopes: ['deployments:read', 'deployments:create'],
};

describe('OAuth 2.0 clients', () => {
  it('creates a confidential client whose secret is shown once and stored only as a hash', async () => {
    // Act
    const created = await call('POST', '/admin/oauth-clients', e2e.admin, confidential);
    // Assess
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'CI pipeline',
      description: 'deploys from CI',
      redirect_uris: confidential.redirect_uris,
      grant_types: confidential.grant_types,
      scopes: confidential.scopes,
      is_confidential: true,
      is_active: true,
      tenant_id: null,
    });
    expect(created.json.client_id).toMatch(/^dplc_[A-Za-z0-9_-]{16,}$/);
    expect(created.json.client_secret).toMatch(/^dplcs_[A-Za-z0-9_-]{40,}$/);
    const byId = await call('GET', `/admin/oauth-clients/${created.json.id}`, e2e.admin);
    const byShortId = await call('GET', `/admin/oauth-clients/${created.json.short_id}`, e2e.admin);
    expect(byId.status).toBe(200);
    expect(byId.json).not.toHaveProperty('client_secret');
    expect(byShortId.json).toEqual(byId.json);
    const { client_secret: secret, ...record } = created.json;
    expect(byId.json).toEqual(record);
    const list = await call('GET', '/admin/oauth-clients', e2e.admin);
    expect(Array.isArray(list.json)).toBe(true);
    expect(list.json.map((c: { id: string }) => c.id)).toContain(created.json.id);
    expect(JSON.stringify(list.json)).not.toContain(secret);
    // What is stored: the hash, never the secret
    const db = DynamoDBDocumentClient.from(dynamoClient(e2e.stack.dynamoEndpoint));
    const { Item } = await db.send(
      new GetCommand({
        TableName: e2e.stack.tables['MainTable']!,
        Key: { pk: `OAUTHCLIENT#${created.json.id}`, sk: 'CLIENT' },
      }),
    );
    expect(Item?.['secretHash']).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(Item)).not.toContain(secret);
  });

  it('creates a public client without a secret, and refuses settings a client could not use', async () => {
    const pub = await call('POST', '/admin/oauth-clients', e2e.admin, {
      name: 'CLI',
      redirect_uris: ['http://localhost:7000/cb'],
      grant_types: ['authorization_code'],
      scopes: ['deployments:read'],
      is_confidential: false,
    });
    expect([pub.status, pub.json.client_secret, pub.json.is_confidential]).toEqual([201, null, false]);
    const rotated = await call('POST', `/admin/oauth-clients/${pub.json.id}/rotate-secret`, e2e.admin);
    expect([rotated.status, rotated.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);

    const refused = async (body: Record<string, unknown>) => {
      const reply = await call('POST', '/admin/oauth-clients', e2e.admin, { ...confidential, ...body });
      return [reply.status, reply.json.error?.code, reply.json.error?.details?.fields?.[0]?.field];
    };
    expect(await refused({ redirect_uris: ['http://ci.example.com/cb'] })).toEqual([
      400,
      'VALIDATION_ERROR',
      'redirect_uris.0',
    ]);
    expect(await refused({ redirect_uris: ['https://ci.example.com/cb#x'] })).toEqual([
      400,
      'VALIDATION_ERROR',
      'redirect_uris.0',
    ]);
    expect(await refused({ redirect_uris: ['/relative'] })).toEqual([400, 'VALIDATION_ERROR', 'redirect_uris.0']);
    expect(await refused({ redirect_uris: [], grant_types: ['authorization_code'] })).toEqual([
      400,
      'VALIDATION_ERROR',
      'redirect_uris',
    ]);
    expect(await refused({ grant_types: ['refresh_token'] })).toEqual([400, 'VALIDATION_ERROR', 'grant_types']);
    expect(await refused({ grant_types: ['client_credentials'], is_confidential: false })).toEqual([
      400,
      'VALIDATION_ERROR',
      'grant_types',
    ]);
    expect(await refused({ grant_types: ['password'] })).toEqual([400, 'VALIDATION_ERROR', 'grant_types.0']);
    expect(await refused({ scopes: ['deployments:read', 'root:all'] })).toEqual([400, 'VALIDATION_ERROR', 'scopes.1']);
    expect((await refused({ name: '' }))[0]).toBe(400);
  });

  it('updates, rotates (a new secret each time) and deactivates; unknown ids are 404', async () => {
    // Prepare
    const created = await call('POST', '/admin/oauth-clients', e2e.admin, confidential);
    // Act + Assess
    const patched = await call('PATCH', `/admin/oauth-clients/${created.json.id}`, e2e.admin, {
      name: 'CI',
      description: null,
      redirect_uris: ['https://ci.example.com/v2/callback'],
      scopes: ['deployments:read'],
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      name: 'CI',
      description: null,
      redirect_uris: ['https://ci.example.com/v2/callback'],
      scopes: ['deployments:read'],
      grant_types: confidential.grant_types,
    });
    expect(patched.json.updated_at >= created.json.updated_at).toBe(true);
    const first = await call('POST', `/admin/oauth-clients/${created.json.id}/rotate-secret`, e2e.admin);
    const second = await call('POST', `/admin/oauth-clients/${created.json.short_id}/rotate-secret`, e2e.admin);
    expect([first.status, first.json.client_id]).toEqual([200, created.json.client_id]);
    expect(new Set([created.json.client_secret, first.json.client_secret, second.json.client_secret]).size).toBe(3);
    const emptied = await call('PATCH', `/admin/oauth-clients/${created.json.id}`, e2e.admin, { redirect_uris: [] });
    expect([emptied.status, emptied.json.error.details.fields[0].field]).toEqual([400, 'redirect_uris']);

    expect((await call('DELETE', `/admin/oauth-clients/${created.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('GET', `/admin/oauth-clients/${created.json.id}`, e2e.admin)).json.is_active).toBe(false);
    expect((await call('DELETE', `/admin/oauth-clients/${created.json.id}`, e2e.admin)).status).toBe(204);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['GET', `/admin/oauth-clients/${unknown}`],
      ['PATCH', `/admin/oauth-clients/${unknown}`],
      ['DELETE', `/admin/oauth-clients/${unknown}`],
      ['POST', `/admin/oauth-clients/${unknown}/rotate-secret`],
      ['GET', '/admin/oauth-clients/nope'],
    ] as const) {
      const reply = await call(method, path, e2e.admin, method === 'PATCH' ? { name: 'x' } : undefined);
      expect([path, reply.status, reply.json.error.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('never gives a client a scope its creator or editor does not hold', async () => {
    // Prepare: a role that manages clients and reads deployments, nothing else
    const role = await call('POST', '/admin/roles', e2e.admin, { name: 'client-manager' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, e2e.admin, {
      permissions: [
        'oauth_clients:read',
        'oauth_clients:create',
        'oauth_clients:update',
        'oauth_clients:delete',
        'deployments:read',
      ],
    });
    await createUser('cm@example.com', 'cm-password', ['client-manager']);
    const manager = await login('cm@example.com', 'cm-password');
    const mine = { ...confidential, scopes: ['deployments:read'] };
    // Act + Assess
    const ok = await call('POST', '/admin/oauth-clients', manager, mine);
    expect(ok.status).toBe(201);
    for (const scopes of [
      ['users:create'],
      ['deployments:read', 'roles:update'],
      ['oauth_clients:create', 'users:update'],
    ]) {
      const reply = await call('POST', '/admin/oauth-clients', manager, { ...mine, scopes });
      expect([reply.status, reply.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    }
    const widened = await call('PATCH', `/admin/oauth-clients/${ok.json.id}`, manager, {
      scopes: ['deployments:read', 'users:create'],
    });
    expect([widened.status, widened.json.error.code, widened.json.error.details.missing]).toEqual([
      403,
      'INSUFFICIENT_PERMISSIONS',
      ['users:create'],
    ]);
    // an admin's wider client is not the manager's to change or to take a secret of (its tokens act for the admin)
    const wide = await call('POST', '/admin/oauth-clients', e2e.admin, { ...confidential, scopes: ['users:create'] });
    for (const [method, path, body] of [
      ['PATCH', `/admin/oauth-clients/${wide.json.id}`, { name: 'renamed' }],
      ['PATCH', `/admin/oauth-clients/${wide.json.id}`, { redirect_uris: ['https://attacker.example/cb'] }],
      ['POST', `/admin/oauth-clients/${wide.json.id}/rotate-secret`, undefined],
    ] as const) {
      const reply = await call(method, path, manager, body);
      expect([path, reply.status, reply.json.error.code]).toEqual([path, 403, 'INSUFFICIENT_PERMISSIONS']);
    }
    const unchanged = await call('GET', `/admin/oauth-clients/${wide.json.id}`, e2e.admin);
    expect([unchanged.json.name, unchanged.json.redirect_uris]).toEqual(['CI pipeline', confidential.redirect_uris]);
    expect((await call('DELETE', `/admin/oauth-clients/${wide.json.id}`, manager)).status).toBe(204);
    expect((await call('GET', `/admin/oauth-clients/${ok.json.id}`, manager)).json.scopes).toEqual([
      'deployments:read',
    ]);
  });

  it('keeps each tenant’s clients to itself, and refuses callers without the permission', async () => {
    // Prepare: two tenants, each with an administrator
    const tenantA = await call('POST', '/tenants', e2e.admin, { name: 'Tenant A', slug: `a-${Date.now()}` });
    const tenantB = await call('POST', '/tenants', e2e.admin, { name: 'Tenant B', slug: `b-${Date.now()}` });
    await createUser('ta@example.com', 'ta-password', ['admin'], tenantA.json.id);
    await createUser('tb@example.com', 'tb-password', ['admin'], tenantB.json.id);
    await createUser('plain@example.com', 'plain-password', ['user']);
    const a = await login('ta@example.com', 'ta-password');
    const b = await login('tb@example.com', 'tb-password');
    const plain = await login('plain@example.com', 'plain-password');
    // Act
    const ofA = await call('POST', '/admin/oauth-clients', a, confidential);
    // Assess
    expect([ofA.status, ofA.json.tenant_id]).toEqual([201, tenantA.json.id]);
    expect((await call('GET', '/admin/oauth-clients', a)).json.map((c: { id: string }) => c.id)).toEqual([ofA.json.id]);
    expect((await call('GET', '/admin/oauth-clients', b)).json).toEqual([]);
    for (const [method, path] of [
      ['GET', `/admin/oauth-clients/${ofA.json.id}`],
      ['PATCH', `/admin/oauth-clients/${ofA.json.id}`],
      ['DELETE', `/admin/oauth-clients/${ofA.json.id}`],
      ['POST', `/admin/oauth-clients/${ofA.json.id}/rotate-secret`],
    ] as const) {
      const reply = await call(method, path, b, method === 'PATCH' ? { name: 'taken' } : undefined);
      expect([path, reply.status]).toEqual([path, 404]);
    }
    expect((await call('GET', `/admin/oauth-clients/${ofA.json.id}`, a)).json.name).toBe('CI pipeline');
    // the global admin sees every tenant's
    expect((await call('GET', '/admin/oauth-clients', e2e.admin)).json.map((c: { id: string }) => c.id)).toContain(
      ofA.json.id,
    );
    // no permission, no credential
    expect((await call('GET', '/admin/oauth-clients', plain)).json.error.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await call('POST', '/admin/oauth-clients', plain, confidential)).status).toBe(403);
    expect((await call('GET', '/admin/oauth-clients', undefined)).status).toBe(401);
  });
});
