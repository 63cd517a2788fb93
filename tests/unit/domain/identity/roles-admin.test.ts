import { describe, expect, it } from 'vitest';
import {
  changePermissions,
  createRole,
  deleteRole,
  findRole,
  listRoles,
  roleDirectory,
  roleUsers,
  updateRole,
  type RolesDeps,
} from '../../../../domain/identity/roles-admin.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aUser, fakeIds, FakeRoleRepository, FakeUserStore } from '../../../fakes/identity.js';
import { systemRole, type Permission } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';

const TENANT_A = 'aaaaaaaa-0000-4000-8000-000000000000';
const TENANT_B = 'bbbbbbbb-0000-4000-8000-000000000000';

const callerHolding = (permissions: readonly Permission[], tenantId: string | null = null): Caller => ({
  kind: 'user',
  userId: 'caller',
  tenantId,
  roles: [],
  permissions: new Set(permissions),
});
const admin = callerHolding(systemRole('admin')?.permissions ?? []);

const setup = () => {
  const roles = new FakeRoleRepository();
  const users = new FakeUserStore();
  const deps: RolesDeps = { roles, users, ids: fakeIds(), clock: new FakeClock() };
  return { deps, roles, users };
};

describe('role administration', () => {
  it('lists system roles with custom ones, by name, one page at a time', async () => {
    const { deps } = setup();
    await createRole(deps, admin, { name: 'auditor' });
    const page = await listRoles(deps, { page: 1, limit: 2 });
    expect(page.data.map((r) => r.name)).toEqual(['admin', 'auditor']);
    expect(page.meta).toMatchObject({ total: 4, total_pages: 2, has_next: true });
  });

  it('refuses to change system roles', async () => {
    const { deps } = setup();
    const adminRole = await findRole(deps, 'admin');
    await expect(updateRole(deps, admin, adminRole.id, { name: 'root' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(deleteRole(deps, admin, adminRole.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(changePermissions(deps, admin, adminRole.id, ['users:read'], 'remove')).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });

  it('refuses taken names, system names included, whatever the case', async () => {
    const { deps } = setup();
    await createRole(deps, admin, { name: 'auditor' });
    await expect(createRole(deps, admin, { name: 'AUDITOR' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(createRole(deps, admin, { name: 'Operator' })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('grants what its permissions say, follows renames in users, and leaves no trace when deleted', async () => {
    // Prepare
    const { deps, roles, users } = setup();
    const role = await createRole(deps, admin, { name: 'auditor' });
    await users.create(aUser({ roles: ['auditor', 'user'] }));
    const directory = roleDirectory(roles);
    // Act + Assess
    await changePermissions(deps, admin, role.id, ['users:read', 'roles:read'], 'assign');
    expect([...(await directory.permissionsOf(['auditor']))].sort()).toEqual(['roles:read', 'users:read']);
    await expect(changePermissions(deps, admin, role.id, ['nope:nope'], 'assign')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await updateRole(deps, admin, role.id, { name: 'reviewer' });
    expect((await users.get(aUser().id))?.roles).toEqual(['reviewer', 'user']);
    await deleteRole(deps, admin, role.id);
    expect((await users.get(aUser().id))?.roles).toEqual(['user']);
    await createRole(deps, admin, { name: 'reviewer' });
    expect((await directory.permissionsOf(['reviewer'])).size).toBe(0);
  });

  it('refuses to assign permissions the caller does not hold, naming each missing one', async () => {
    // Prepare
    const { deps, roles } = setup();
    const role = await createRole(deps, admin, { name: 'helpers' });
    const caller = callerHolding(['roles:update', 'users:read']);
    // Act
    const refused = changePermissions(
      deps,
      caller,
      role.id,
      ['users:read', 'users:delete', 'tenants:delete'],
      'assign',
    );
    // Assess
    await expect(refused).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
      details: { missing: ['users:delete', 'tenants:delete'] },
    });
    expect((await roles.get(role.id))?.permissions).toEqual([]);
    await changePermissions(deps, caller, role.id, ['users:read'], 'assign');
    expect((await roles.get(role.id))?.permissions).toEqual(['users:read']);
  });

  it('lets no tenant-scoped caller create, change or delete a role shared by every tenant', async () => {
    const { deps } = setup();
    const role = await createRole(deps, admin, { name: 'shared' });
    const scoped = callerHolding(systemRole('admin')?.permissions ?? [], TENANT_A);
    const operator = await findRole(deps, 'operator');
    const refusals = [
      createRole(deps, scoped, { name: 'mine' }),
      updateRole(deps, scoped, role.id, { name: 'renamed' }),
      deleteRole(deps, scoped, role.id),
      changePermissions(deps, scoped, role.id, ['users:read'], 'assign'),
      changePermissions(deps, scoped, operator.id, ['users:read'], 'assign'),
      changePermissions(deps, scoped, role.id, ['users:read'], 'remove'),
    ];
    for (const refusal of refusals)
      await expect(refusal).rejects.toMatchObject({ code: 'FORBIDDEN', details: { reason: 'tenant_restriction' } });
  });

  it("shows a tenant-scoped caller only its own tenant's holders of a role", async () => {
    const { deps, users } = setup();
    await users.create(aUser({ id: 'in-a', shortId: 'a', email: 'a@x.com', username: 'a', tenantId: TENANT_A }));
    await users.create(aUser({ id: 'in-b', shortId: 'b', email: 'b@x.com', username: 'b', tenantId: TENANT_B }));
    await users.create(aUser({ id: 'global', shortId: 'g', email: 'g@x.com', username: 'g', tenantId: null }));
    const operator = await findRole(deps, 'operator');
    expect((await roleUsers(deps, callerHolding(['roles:read'], TENANT_A), operator.id)).map((u) => u.id)).toEqual([
      'in-a',
    ]);
    expect((await roleUsers(deps, admin, operator.id)).map((u) => u.id).sort()).toEqual(['global', 'in-a', 'in-b']);
  });
});
