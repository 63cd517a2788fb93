import { describe, expect, it } from 'vitest';
import { changePermissions, createRole, deleteRole, findRole, listRoles, roleDirectory, updateRole, type RolesDeps } from '../../../../domain/identity/roles-admin.js';
import { FakeClock } from '../../../fakes/clock.js';
import { aUser, fakeIds, FakeRoleRepository, FakeUserStore } from '../../../fakes/identity.js';

const setup = () => {
  const roles = new FakeRoleRepository();
  const users = new FakeUserStore();
  const deps: RolesDeps = { roles, users, ids: fakeIds(), clock: new FakeClock() };
  return { deps, roles, users };
};

describe('role administration', () => {
  it('lists system roles with custom ones, by name, one page at a time', async () => {
    const { deps } = setup();
    await createRole(deps, { name: 'auditor' });
    const page = await listRoles(deps, { page: 1, limit: 2 });
    expect(page.data.map((r) => r.name)).toEqual(['admin', 'auditor']);
    expect(page.meta).toMatchObject({ total: 4, total_pages: 2, has_next: true });
  });

  it('refuses to change system roles', async () => {
    const { deps } = setup();
    const admin = await findRole(deps, 'admin');
    await expect(updateRole(deps, admin.id, { name: 'root' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(deleteRole(deps, admin.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(changePermissions(deps, admin.id, ['users:read'], 'remove')).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('refuses taken names, system names included, whatever the case', async () => {
    const { deps } = setup();
    await createRole(deps, { name: 'auditor' });
    await expect(createRole(deps, { name: 'AUDITOR' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(createRole(deps, { name: 'Operator' })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('grants what its permissions say, follows renames in users, and leaves no trace when deleted', async () => {
    // Prepare
    const { deps, roles, users } = setup();
    const role = await createRole(deps, { name: 'auditor' });
    await users.create(aUser({ roles: ['auditor', 'user'] }));
    const directory = roleDirectory(roles);
    // Act + Assess
    await changePermissions(deps, role.id, ['users:read', 'roles:read'], 'assign');
    expect([...(await directory.permissionsOf(['auditor']))].sort()).toEqual(['roles:read', 'users:read']);
    await expect(changePermissions(deps, role.id, ['nope:nope'], 'assign')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await updateRole(deps, role.id, { name: 'reviewer' });
    expect((await users.get(aUser().id))?.roles).toEqual(['reviewer', 'user']);
    await deleteRole(deps, role.id);
    expect((await users.get(aUser().id))?.roles).toEqual(['user']);
    await createRole(deps, { name: 'reviewer' });
    expect((await directory.permissionsOf(['reviewer'])).size).toBe(0);
  });
});
