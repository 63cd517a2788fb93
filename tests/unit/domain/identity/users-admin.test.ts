import { describe, expect, it } from 'vitest';
import type { Permission } from '../../../../domain/identity/permissions.js';
import { systemRole } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import {
  createUser,
  deleteUser,
  EDIT_ATTEMPTS,
  listUsers,
  updateUser,
  type UsersDeps,
} from '../../../../domain/identity/users-admin.js';
import { FakeClock } from '../../../fakes/clock.js';
import {
  aUser,
  fakeHasher,
  fakeIds,
  FakeApiKeyRepository,
  FakeRoleRepository,
  FakeUserStore,
} from '../../../fakes/identity.js';
import { FakeProviderRepository, FakeLinkedUserStore } from '../../../fakes/sso.js';

const TENANT_A = 'aaaaaaaa-0000-4000-8000-000000000000';
const TENANT_B = 'bbbbbbbb-0000-4000-8000-000000000000';

const setup = () => {
  const users = new FakeUserStore();
  const roles = new FakeRoleRepository();
  const apiKeys = new FakeApiKeyRepository();
  const clock = new FakeClock(new Date('2026-11-22T10:00:00.000Z'));
  const deps: UsersDeps = {
    users,
    roles,
    apiKeys,
    hasher: fakeHasher,
    ids: fakeIds(),
    clock,
    identityProviders: { get: async () => undefined },
  };
  return { deps, users, apiKeys, clock };
};

const callerWith = (role: string, tenantId: string | null = null, userId = 'caller'): Caller => ({
  kind: 'user',
  userId,
  tenantId,
  roles: [role],
  permissions: new Set<Permission>(systemRole(role)?.permissions ?? []),
});

const command = (overrides: Record<string, unknown> = {}) => ({
  email: 'new@example.com',
  username: 'new',
  password: 'long-password',
  roles: ['user'],
  ...overrides,
});

describe('user administration', () => {
  it('creates a user with a hashed password and no secrets in the answer', async () => {
    const { deps, users } = setup();
    const view = await createUser(deps, callerWith('admin'), command());
    expect(view).toMatchObject({ email: 'new@example.com', roles: ['user'], status: 'active', tenant_id: null });
    expect(JSON.stringify(view)).not.toContain('password');
    expect((await users.get(view.id))?.passwordHash).toBe('hashed:long-password');
  });

  it('refuses unknown roles (400) and roles wider than the caller (403)', async () => {
    const { deps } = setup();
    await expect(createUser(deps, callerWith('admin'), command({ roles: ['ghost'] }))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'roles.0' }] },
    });
    await expect(createUser(deps, callerWith('operator'), command({ roles: ['admin'] }))).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
    });
  });

  it('keeps tenant-scoped callers in their tenant: listing, creating, reading', async () => {
    const { deps, users } = setup();
    await users.create(aUser({ id: 'in-a', shortId: 'a', email: 'a@x.com', username: 'a', tenantId: TENANT_A }));
    await users.create(aUser({ id: 'in-b', shortId: 'b', email: 'b@x.com', username: 'b', tenantId: TENANT_B }));
    await users.create(aUser({ id: 'global', shortId: 'g', email: 'g@x.com', username: 'g', tenantId: null }));
    const scoped = callerWith('admin', TENANT_A);
    const listed = await listUsers(deps, scoped, { page: 1, limit: 50, tenant_id: TENANT_B });
    expect(listed.data.map((u) => u.id)).toEqual(['in-a']);
    const global = await listUsers(deps, callerWith('admin'), { page: 1, limit: 50, tenant_id: TENANT_A });
    expect(global.data.map((u) => u.id).sort()).toEqual(['global', 'in-a']);
    expect((await createUser(deps, scoped, command())).tenant_id).toBe(TENANT_A);
    await expect(
      createUser(deps, scoped, command({ email: 'c@x.com', username: 'c', tenant_id: TENANT_B })),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(updateUser(deps, scoped, 'in-b', { display_name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('revokes sessions and API keys when a user is deactivated, and not on other changes', async () => {
    const { deps, users, apiKeys, clock } = setup();
    await users.create(aUser());
    await apiKeys.create({
      id: 'k1',
      userId: aUser().id,
      tenantId: null,
      name: 'ci',
      description: null,
      keyPrefix: 'dpl_x',
      keyHash: 'h',
      scopes: [],
      createdAt: '',
      expiresAt: null,
      lastUsedAt: null,
      lastUsedIp: null,
      revokedAt: null,
    });
    await updateUser(deps, callerWith('admin'), aUser().id, { display_name: 'Ada L.' });
    expect((await users.get(aUser().id))?.tokensValidAfter).toBe(0);
    clock.advance(1);
    await updateUser(deps, callerWith('admin'), aUser().id, { status: 'locked' });
    expect((await users.get(aUser().id))?.tokensValidAfter).toBe(clock.now().getTime());
    expect(apiKeys.keys.get('k1')?.revokedAt).not.toBeNull();
  });

  it('does not let callers lock or delete themselves', async () => {
    const { deps, users } = setup();
    await users.create(aUser());
    const self = callerWith('admin', null, aUser().id);
    await expect(updateUser(deps, self, aUser().id, { status: 'inactive' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(deleteUser(deps, self, aUser().id)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('searches username and email case-insensitively and filters by exact status', async () => {
    const { deps, users } = setup();
    await users.create(aUser({ id: '1', shortId: '1', email: 'Ada@Example.com', username: 'ada' }));
    await users.create(
      aUser({ id: '2', shortId: '2', email: 'bob@example.com', username: 'BOBBY', status: 'pending' }),
    );
    const caller = callerWith('admin');
    expect((await listUsers(deps, caller, { page: 1, limit: 50, search: 'EXAMPLE' })).meta.total).toBe(2);
    expect((await listUsers(deps, caller, { page: 1, limit: 50, search: 'bobby' })).data.map((u) => u.id)).toEqual([
      '2',
    ]);
    expect((await listUsers(deps, caller, { page: 1, limit: 50, status: 'pending' })).data.map((u) => u.id)).toEqual([
      '2',
    ]);
  });

  it('refuses to change, lock or delete a user holding permissions the caller lacks, naming them', async () => {
    // Prepare: an operator-like caller that may manage users, and an admin target
    const { deps, users } = setup();
    await users.create(aUser({ id: 'target', roles: ['admin'] }));
    await users.create(aUser({ id: 'other-admin', shortId: 'o', email: 'o@x.com', username: 'o', roles: ['admin'] }));
    const manager: Caller = {
      ...callerWith('operator'),
      permissions: new Set<Permission>([
        ...(systemRole('operator')?.permissions ?? []),
        'users:update',
        'users:delete',
      ]),
    };
    // Act + Assess
    await expect(updateUser(deps, manager, 'target', { status: 'inactive' })).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
      details: { missing: expect.arrayContaining(['users:create', 'roles:update']) },
    });
    await expect(updateUser(deps, manager, 'target', { display_name: 'x' })).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
    });
    await expect(deleteUser(deps, manager, 'target')).rejects.toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    expect(await users.get('target')).toMatchObject({ status: 'active', displayName: 'Ada' });
    // A user no stronger than the manager can be managed.
    await users.create(aUser({ id: 'weaker', shortId: 'w', email: 'w@x.com', username: 'w', roles: ['user'] }));
    await expect(updateUser(deps, manager, 'weaker', { status: 'locked' })).resolves.toMatchObject({
      status: 'locked',
    });
  });

  it('keeps the last active admin: no deactivating, demoting or deleting it while no other is active', async () => {
    const { deps, users } = setup();
    await users.create(aUser({ id: 'last', roles: ['admin'] }));
    const other = callerWith('admin', null, 'someone-else');
    await expect(updateUser(deps, other, 'last', { status: 'inactive' })).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { reason: 'last_admin' },
    });
    await expect(updateUser(deps, other, 'last', { roles: ['operator'] })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(deleteUser(deps, other, 'last')).rejects.toMatchObject({ code: 'CONFLICT' });
    // A tenant's admin does not stand in for the last global one.
    await users.create(
      aUser({
        id: 'tenant-admin',
        shortId: 't',
        email: 't@x.com',
        username: 't',
        roles: ['admin'],
        tenantId: TENANT_A,
      }),
    );
    await expect(updateUser(deps, other, 'last', { status: 'inactive' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await users.create(aUser({ id: 'second', shortId: 's2', email: 's@x.com', username: 's', roles: ['admin'] }));
    await expect(updateUser(deps, other, 'last', { status: 'inactive' })).resolves.toMatchObject({
      status: 'inactive',
    });
  });

  it('writes only the fields named: a 2FA enable or login that lands between read and write survives', async () => {
    // Prepare: the edit reads the user, then 2FA is enabled and a login recorded before it writes
    const { deps, users, clock } = setup();
    await users.create(aUser());
    const racing: UsersDeps = {
      ...deps,
      users: Object.assign(Object.create(users) as FakeUserStore, {
        find: async (id: string) => {
          const seen = await users.find(id);
          if (seen !== undefined && !seen.twoFactor.enabled) {
            await users.setTwoFactor(
              seen.id,
              { enabled: true, secret: 'enc', lastStep: 7 },
              { enabled: false, lastStep: null },
            );
            await users.recordLogin(seen.id, clock.now());
          }
          return seen;
        },
      }),
    };
    // Act
    const view = await updateUser(racing, callerWith('admin'), aUser().id, { display_name: 'Ada L.' });
    // Assess
    const stored = await users.get(aUser().id);
    expect(stored).toMatchObject({
      displayName: 'Ada L.',
      twoFactor: { enabled: true, lastStep: 7 },
      lastLoginAt: clock.now().toISOString(),
    });
    expect(view).toMatchObject({ display_name: 'Ada L.', two_factor_enabled: true });
  });

  it('answers 409 when the user keeps changing on every attempt', async () => {
    const { deps, users, clock } = setup();
    await users.create(aUser());
    let writes = 0;
    const busy: UsersDeps = {
      ...deps,
      users: Object.assign(Object.create(users) as FakeUserStore, {
        find: async (id: string) => {
          const seen = await users.find(id);
          writes += 1;
          await users.recordLogin(id, clock.now());
          return seen;
        },
      }),
    };
    await expect(updateUser(busy, callerWith('admin'), aUser().id, { display_name: 'x' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(writes).toBe(EDIT_ATTEMPTS);
    expect((await users.get(aUser().id))?.displayName).toBe('Ada');
  });

  describe('moving a user linked through an identity provider', () => {
    const linkedSetup = () => {
      const base = setup();
      const providers = new FakeProviderRepository();
      const users = new FakeLinkedUserStore(providers);
      const deps: UsersDeps = { ...base.deps, users, identityProviders: providers };
      const provider = (id: string, tenantId: string | null) =>
        providers.providers.set(id, { id, shortId: id, name: id, tenantId, linkedUsers: 0 } as never);
      provider('idp-a', TENANT_A);
      provider('idp-global', null);
      const linked = (providerId: string) =>
        users.create(
          aUser({
            tenantId: TENANT_A,
            roles: ['operator', 'user'],
            mappedRoles: ['operator'],
            identityLink: { providerId, providerName: providerId, subject: 'sub-1' },
          }),
        );
      return { deps, users, providers, linked };
    };

    it('unlinks it from its tenant’s provider in the same write, with the roles only that provider mapped', async () => {
      for (const destination of [TENANT_B, null]) {
        // Prepare
        const { deps, users, providers, linked } = linkedSetup();
        await linked('idp-a');
        // Act
        const view = await updateUser(deps, callerWith('admin'), aUser().id, { tenant_id: destination });
        // Assess
        expect(view).toMatchObject({ tenant_id: destination, identity_provider: null, roles: ['user'] });
        expect(await users.get(aUser().id)).toMatchObject({
          tenantId: destination,
          identityLink: null,
          mappedRoles: [],
          roles: ['user'],
        });
        expect(providers.providers.get('idp-a')!.linkedUsers).toBe(0);
      }
    });

    it('keeps a global provider’s link, and a link when the user stays in the provider’s tenant', async () => {
      const global = linkedSetup();
      await global.linked('idp-global');
      const moved = await updateUser(global.deps, callerWith('admin'), aUser().id, { tenant_id: TENANT_B });
      expect(moved).toMatchObject({ tenant_id: TENANT_B, identity_provider: { id: 'idp-global' } });
      expect(global.providers.providers.get('idp-global')!.linkedUsers).toBe(1);
      const same = linkedSetup();
      await same.linked('idp-a');
      const stayed = await updateUser(same.deps, callerWith('admin'), aUser().id, { tenant_id: TENANT_A });
      expect(stayed).toMatchObject({ identity_provider: { id: 'idp-a' }, roles: ['operator', 'user'] });
    });
  });
});
