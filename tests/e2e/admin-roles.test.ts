// Role administration over HTTP: system roles are listed and immutable, custom roles are created, renamed,
// given and stripped of permissions, and what they grant reaches their users at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
let admin: string;

const call = async (method: string, path: string, token: string, body?: unknown) => {
  const response = await fetch(`${stack.baseUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : JSON.parse(text) };
};

const login = async (email: string, password: string): Promise<string> => {
  const response = await fetch(`${stack.baseUrl}/api/v1/auth/login`, { method: 'POST', body: JSON.stringify({ email, password }) });
  return ((await response.json()) as { access_token: string }).access_token;
};

beforeAll(async () => {
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('roles')}-`, bootstrapAdmin: ADMIN });
  admin = await login(ADMIN.email, ADMIN.password);
});

afterAll(async () => {
  await stack?.stop();
});

describe('roles', () => {
  it('lists the system roles, paginated, and refuses to change them', async () => {
    const list = await call('GET', '/admin/roles?limit=2', admin);
    expect(list.status).toBe(200);
    expect(list.json.meta).toMatchObject({ page: 1, limit: 2, has_next: true });
    const all = await call('GET', '/admin/roles', admin);
    expect(all.json.data.filter((r: { is_system: boolean }) => r.is_system).map((r: { name: string }) => r.name)).toEqual(['admin', 'operator', 'user']);
    const adminRole = all.json.data.find((r: { name: string }) => r.name === 'admin');
    expect((await call('GET', `/admin/roles/${adminRole.id}`, admin)).json.permissions).toHaveLength(57);
    for (const [method, path, body] of [
      ['PUT', `/admin/roles/${adminRole.id}`, { name: 'root' }],
      ['DELETE', `/admin/roles/${adminRole.id}`, undefined],
      ['POST', `/admin/roles/${adminRole.id}/permissions`, { permissions: ['users:read'] }],
      ['POST', `/admin/roles/${adminRole.id}/permissions/remove`, { permissions: ['users:read'] }],
    ] as const) {
      const reply = await call(method, path, admin, body);
      expect([path, reply.status, reply.json.error.code]).toEqual([path, 403, 'FORBIDDEN']);
    }
  });

  it('creates a custom role whose permissions reach its users at once, renames and deletes it', async () => {
    // Prepare
    const created = await call('POST', '/admin/roles', admin, { name: 'auditor', description: 'reads roles' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'auditor', is_system: false, permissions: [] });
    await createUser('ann@example.com', 'ann-password', ['auditor']);
    const ann = await login('ann@example.com', 'ann-password');
    expect((await call('GET', '/admin/roles', ann)).status).toBe(403);

    // Act + Assess: permissions
    expect((await call('POST', `/admin/roles/${created.json.id}/permissions`, admin, { permissions: ['roles:read', 'users:read'] })).status).toBe(204);
    expect((await call('GET', '/admin/roles', ann)).status).toBe(200);
    const groups = await call('GET', `/admin/roles/${created.json.short_id}/permissions`, admin);
    expect(groups.json.map((g: { resource: string }) => g.resource).sort()).toEqual(['roles', 'users']);
    expect((await call('POST', `/admin/roles/${created.json.id}/permissions/remove`, admin, { permissions: ['roles:read'] })).status).toBe(204);
    expect((await call('GET', '/admin/roles', ann)).status).toBe(403);
    expect((await call('POST', `/admin/roles/${created.json.id}/permissions`, admin, { permissions: ['roles:read'] })).status).toBe(204);

    // Role users, rename (the user keeps the role), delete (the user loses it)
    const users = await call('GET', `/admin/roles/${created.json.id}/users`, admin);
    expect(users.json).toEqual([expect.objectContaining({ email: 'ann@example.com', status: 'active' })]);
    const renamed = await call('PUT', `/admin/roles/${created.json.id}`, admin, { name: 'reviewer' });
    expect(renamed.json.name).toBe('reviewer');
    expect((await call('GET', '/admin/roles', ann)).status).toBe(200);
    expect((await call('GET', '/auth/me', ann)).json.roles).toEqual(['reviewer']);
    expect((await call('DELETE', `/admin/roles/${created.json.id}`, admin)).status).toBe(204);
    expect((await call('GET', `/admin/roles/${created.json.id}`, admin)).status).toBe(404);
    expect((await call('GET', '/admin/roles', ann)).status).toBe(403);
    expect((await call('GET', '/auth/me', ann)).json.roles).toEqual([]);
  });

  it('answers 409 for a taken name, 404 for unknown roles and permissions, 400 for bad input', async () => {
    const first = await call('POST', '/admin/roles', admin, { name: 'release-manager' });
    expect(first.status).toBe(201);
    expect((await call('POST', '/admin/roles', admin, { name: 'Release-Manager' })).status).toBe(409);
    expect((await call('POST', '/admin/roles', admin, { name: 'operator' })).status).toBe(409);
    expect((await call('POST', '/admin/roles', admin, { name: '1 bad name' })).json.error.code).toBe('VALIDATION_ERROR');
    expect((await call('GET', '/admin/roles/00000000-0000-4000-8000-0000000000ff', admin)).status).toBe(404);
    const unknownPermission = await call('POST', `/admin/roles/${first.json.id}/permissions`, admin, { permissions: ['nope:nope'] });
    expect([unknownPermission.status, unknownPermission.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await call('POST', `/admin/roles/${first.json.id}/permissions`, admin, { permissions: [] })).status).toBe(400);
  });
});
