// Role administration over HTTP: system roles are listed and immutable, custom roles are created, renamed,
// given and stripped of permissions, and what they grant reaches their users at once.
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('roles');

const api = apiClient(() => e2e.stack.baseUrl);
/** An admin API call: paths relative to /api/v1, a bearer token, a JSON body. */
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });
const login = async (email: string, password: string): Promise<string> => (await api.login({ email, password })).token;

describe('roles', () => {
  it('lists the system roles, paginated, and refuses to change them', async () => {
    const list = await call('GET', '/admin/roles?limit=2', e2e.admin);
    expect(list.status).toBe(200);
    expect(list.json.meta).toMatchObject({ page: 1, limit: 2, has_next: true });
    const all = await call('GET', '/admin/roles', e2e.admin);
    expect(
      all.json.data.filter((r: { is_system: boolean }) => r.is_system).map((r: { name: string }) => r.name),
    ).toEqual(['admin', 'operator', 'user']);
    const adminRole = all.json.data.find((r: { name: string }) => r.name === 'admin');
    expect((await call('GET', `/admin/roles/${adminRole.id}`, e2e.admin)).json.permissions).toHaveLength(57);
    for (const [method, path, body] of [
      ['PUT', `/admin/roles/${adminRole.id}`, { name: 'root' }],
      ['DELETE', `/admin/roles/${adminRole.id}`, undefined],
      ['POST', `/admin/roles/${adminRole.id}/permissions`, { permissions: ['users:read'] }],
      ['POST', `/admin/roles/${adminRole.id}/permissions/remove`, { permissions: ['users:read'] }],
    ] as const) {
      const reply = await call(method, path, e2e.admin, body);
      expect([path, reply.status, reply.json.error.code]).toEqual([path, 403, 'FORBIDDEN']);
    }
  });

  it('creates a custom role whose permissions reach its users at once, renames and deletes it', async () => {
    // Prepare
    const created = await call('POST', '/admin/roles', e2e.admin, { name: 'auditor', description: 'reads roles' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'auditor', is_system: false, permissions: [] });
    await createUser('ann@example.com', 'ann-password', ['auditor']);
    const ann = await login('ann@example.com', 'ann-password');
    expect((await call('GET', '/admin/roles', ann)).status).toBe(403);

    // Act + Assess: permissions
    expect(
      (
        await call('POST', `/admin/roles/${created.json.id}/permissions`, e2e.admin, {
          permissions: ['roles:read', 'users:read'],
        })
      ).status,
    ).toBe(204);
    expect((await call('GET', '/admin/roles', ann)).status).toBe(200);
    const groups = await call('GET', `/admin/roles/${created.json.short_id}/permissions`, e2e.admin);
    expect(groups.json.map((g: { resource: string }) => g.resource).sort()).toEqual(['roles', 'users']);
    expect(
      (
        await call('POST', `/admin/roles/${created.json.id}/permissions/remove`, e2e.admin, {
          permissions: ['roles:read'],
        })
      ).status,
    ).toBe(204);
    expect((await call('GET', '/admin/roles', ann)).status).toBe(403);
    expect(
      (await call('POST', `/admin/roles/${created.json.id}/permissions`, e2e.admin, { permissions: ['roles:read'] }))
        .status,
    ).toBe(204);

    // Role users, rename (the user keeps the role), delete (the user loses it)
    const users = await call('GET', `/admin/roles/${created.json.id}/users`, e2e.admin);
    expect(users.json).toEqual([expect.objectContaining({ email: 'ann@example.com', status: 'active' })]);
    const renamed = await call('PUT', `/admin/roles/${created.json.id}`, e2e.admin, { name: 'reviewer' });
    expect(renamed.json.name).toBe('reviewer');
    expect((await call('GET', '/admin/roles', ann)).status).toBe(200);
    expect((await call('GET', '/auth/me', ann)).json.roles).toEqual(['reviewer']);
    expect((await call('DELETE', `/admin/roles/${created.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('GET', `/admin/roles/${created.json.id}`, e2e.admin)).status).toBe(404);
    expect((await call('GET', '/admin/roles', ann)).status).toBe(403);
    expect((await call('GET', '/auth/me', ann)).json.roles).toEqual([]);
  });

  it('answers 409 for a taken name, 404 for unknown roles and permissions, 400 for bad input', async () => {
    const first = await call('POST', '/admin/roles', e2e.admin, { name: 'release-manager' });
    expect(first.status).toBe(201);
    expect((await call('POST', '/admin/roles', e2e.admin, { name: 'Release-Manager' })).status).toBe(409);
    expect((await call('POST', '/admin/roles', e2e.admin, { name: 'operator' })).status).toBe(409);
    expect((await call('POST', '/admin/roles', e2e.admin, { name: '1 bad name' })).json.error.code).toBe(
      'VALIDATION_ERROR',
    );
    expect((await call('GET', '/admin/roles/00000000-0000-4000-8000-0000000000ff', e2e.admin)).status).toBe(404);
    const unknownPermission = await call('POST', `/admin/roles/${first.json.id}/permissions`, e2e.admin, {
      permissions: ['nope:nope'],
    });
    expect([unknownPermission.status, unknownPermission.json.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(
      (await call('POST', `/admin/roles/${first.json.id}/permissions`, e2e.admin, { permissions: [] })).status,
    ).toBe(400);
  });
});

describe('users', () => {
  // Users of a tenant reference it (a tenant with users cannot be deleted), so the tenants must exist.
  let TENANT_A = '';
  let TENANT_B = '';
  beforeAll(async () => {
    TENANT_A = (await call('POST', '/tenants', e2e.admin, { name: 'Users A', slug: 'users-a' })).json.id;
    TENANT_B = (await call('POST', '/tenants', e2e.admin, { name: 'Users B', slug: 'users-b' })).json.id;
  });

  it('refuses a user in a tenant that does not exist', async () => {
    const reply = await call('POST', '/admin/users', e2e.admin, {
      email: 'nobody@example.com',
      username: 'nobody',
      password: 'nobody-password',
      roles: [],
      tenant_id: '11111111-1111-4111-8111-00000000000c',
    });
    expect([reply.status, reply.json.error.details.fields[0].field]).toEqual([400, 'tenant_id']);
  });

  it('creates users, lists them with search, status and tenant filters, and finds them by short id', async () => {
    const made = await call('POST', '/admin/users', e2e.admin, {
      email: 'Bob@Example.com',
      username: 'bob',
      password: 'bob-password',
      display_name: 'Bob',
      roles: ['operator'],
      tenant_id: TENANT_A,
    });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({
      email: 'bob@example.com',
      username: 'bob',
      roles: ['operator'],
      tenant_id: TENANT_A,
      status: 'active',
      two_factor_enabled: false,
    });
    expect(JSON.stringify(made.json)).not.toMatch(/password/i);
    await call('POST', '/admin/users', e2e.admin, {
      email: 'carol@example.com',
      username: 'carol',
      password: 'carol-password',
      roles: ['user'],
      tenant_id: TENANT_B,
      status: 'pending',
    });

    const searched = await call('GET', '/admin/users?search=BOB', e2e.admin);
    expect(searched.json.data.map((u: { username: string }) => u.username)).toEqual(['bob']);
    const pending = await call('GET', '/admin/users?status=pending', e2e.admin);
    expect(pending.json.data.map((u: { username: string }) => u.username)).toEqual(['carol']);
    const tenantA = await call('GET', `/admin/users?tenant_id=${TENANT_A}`, e2e.admin);
    const names = tenantA.json.data.map((u: { username: string }) => u.username);
    expect(names).toContain('bob');
    expect(names).toContain('admin'); // global users are included
    expect(names).not.toContain('carol');
    const badStatus = await call('GET', '/admin/users?status=sleeping', e2e.admin);
    expect([badStatus.status, badStatus.json.error.code, badStatus.json.error.details.fields[0].field]).toEqual([
      400,
      'VALIDATION_ERROR',
      'status',
    ]);
    expect((await call('GET', `/admin/users/${made.json.short_id}`, e2e.admin)).json.id).toBe(made.json.id);
    const duplicate = await call('POST', '/admin/users', e2e.admin, {
      email: 'bob@example.com',
      username: 'bob2',
      password: 'bob-password',
      roles: [],
    });
    expect([duplicate.status, duplicate.json.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('deactivating a user revokes their sessions and API keys at once', async () => {
    const made = await call('POST', '/admin/users', e2e.admin, {
      email: 'dave@example.com',
      username: 'dave',
      password: 'dave-password',
      roles: ['operator'],
    });
    const dave = await login('dave@example.com', 'dave-password');
    const key = (await call('POST', '/auth/api-keys', dave, { name: 'ci', scopes: ['deployments:read'] })).json
      .full_key as string;
    expect((await call('GET', '/auth/me', key)).status).toBe(200);
    const updated = await call('PATCH', `/admin/users/${made.json.id}`, e2e.admin, { status: 'inactive' });
    expect(updated.json.status).toBe('inactive');
    expect((await call('GET', '/auth/me', dave)).json.error.code).toBe('INVALID_TOKEN');
    expect((await call('GET', '/auth/me', key)).json.error.code).toBe('INVALID_CREDENTIALS');
    expect(
      (await api.call('POST', '/api/v1/auth/login', { body: { email: 'dave@example.com', password: 'dave-password' } }))
        .status,
    ).toBe(401);
    // Reactivated, the old key stays revoked.
    await call('PATCH', `/admin/users/${made.json.id}`, e2e.admin, { status: 'active' });
    expect((await call('GET', '/auth/me', key)).status).toBe(401);
  });

  it('never grants roles wider than the granter, and keeps tenant admins in their tenant', async () => {
    // A tenant-scoped user manager (custom role: users read/create/update, nothing else).
    const role = await call('POST', '/admin/roles', e2e.admin, { name: 'tenant-user-admin' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, e2e.admin, {
      permissions: ['users:read', 'users:create', 'users:update'],
    });
    await call('POST', '/admin/users', e2e.admin, {
      email: 'erin@example.com',
      username: 'erin',
      password: 'erin-password',
      roles: ['tenant-user-admin'],
      tenant_id: TENANT_A,
    });
    const erin = await login('erin@example.com', 'erin-password');

    const escalate = await call('POST', '/admin/users', erin, {
      email: 'x@example.com',
      username: 'x',
      password: 'x-password',
      roles: ['admin'],
    });
    expect([escalate.status, escalate.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const elsewhere = await call('POST', '/admin/users', erin, {
      email: 'y@example.com',
      username: 'y',
      password: 'y-password',
      roles: [],
      tenant_id: TENANT_B,
    });
    expect([elsewhere.status, elsewhere.json.error.code]).toEqual([403, 'FORBIDDEN']);
    const own = await call('POST', '/admin/users', erin, {
      email: 'z@example.com',
      username: 'z',
      password: 'z-password',
      roles: [],
    });
    expect(own.json.tenant_id).toBe(TENANT_A);

    const listed = await call('GET', `/admin/users?tenant_id=${TENANT_B}`, erin);
    expect(listed.json.data.every((u: { tenant_id: string }) => u.tenant_id === TENANT_A)).toBe(true);
    const carol = (await call('GET', '/admin/users?search=carol', e2e.admin)).json.data[0];
    expect((await call('GET', `/admin/users/${carol.id}`, erin)).status).toBe(404);
    expect((await call('PATCH', `/admin/users/${carol.id}`, erin, { display_name: 'Hacked' })).status).toBe(404);
  });

  it('deletes a user (not oneself); the deleted user can no longer log in', async () => {
    const made = await call('POST', '/admin/users', e2e.admin, {
      email: 'frank@example.com',
      username: 'frank',
      password: 'frank-password',
      roles: [],
    });
    expect((await call('DELETE', `/admin/users/${made.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('GET', `/admin/users/${made.json.id}`, e2e.admin)).status).toBe(404);
    expect(
      (
        await api.call('POST', '/api/v1/auth/login', {
          body: { email: 'frank@example.com', password: 'frank-password' },
        })
      ).status,
    ).toBe(401);
    const me = (await call('GET', '/auth/me', e2e.admin)).json;
    expect((await call('DELETE', `/admin/users/${me.id}`, e2e.admin)).status).toBe(409);
  });
});
