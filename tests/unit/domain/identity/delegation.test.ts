import { describe, expect, it } from 'vitest';
import {
  actsAsAdmin,
  actsWithEveryRoleOf,
  callerOfCredential,
  delegatedCaller,
  isAdminSession,
  mayOverrideFreeze,
  mayRetryFailedAnalysis,
  mayReuseSecretsOf,
  requireUserSession,
} from '../../../../domain/identity/delegation.js';
import { ForbiddenError } from '../../../../domain/identity/errors.js';
import { PERMISSIONS, systemRole, type Permission } from '../../../../domain/identity/permissions.js';
import type { Caller, DelegatedCredential } from '../../../../domain/identity/types.js';

const grants = new Map<string, ReadonlySet<Permission>>(
  ['admin', 'operator', 'user'].map((name) => [name, new Set(systemRole(name)!.permissions)]),
);
const ALL = PERMISSIONS.map((p) => p.name);
const admin = { id: 'ada', tenantId: null, roles: ['admin'] };
const key = (scopes: readonly Permission[]): DelegatedCredential => ({ type: 'api_key', id: 'k1', scopes });
const session = (roles: readonly string[], userId = 'ada', tenantId: string | null = null): Caller => ({
  kind: 'user',
  userId,
  tenantId,
  roles,
  permissions: new Set(roles.flatMap((r) => [...(grants.get(r) ?? [])])),
});

describe('delegatedCaller', () => {
  it('acts with its scopes ∩ the owner’s current permissions, in the owner’s tenant, and only the roles it covers whole', () => {
    // Prepare
    const owner = { id: 'olga', tenantId: 't1', roles: ['operator'] };
    // Act
    const caller = delegatedCaller(owner, grants, key(['deployments:create', 'users:delete']));
    // Assess
    expect(caller).toMatchObject({ kind: 'api_key', userId: 'olga', tenantId: 't1', roles: [], apiKeyId: 'k1' });
    expect([...caller.permissions]).toEqual(['deployments:create']);
    expect(caller.ownerRoles).toEqual(['operator']);
  });

  it('gives an admin’s narrow key no admin role, and a key scoped to all 57 the admin role', () => {
    // Act
    const narrow = delegatedCaller(admin, grants, key(['deployments:create', 'deployments:read']));
    const whole = delegatedCaller(admin, grants, key(ALL));
    const oauth = delegatedCaller(admin, grants, { type: 'oauth', id: 'dplc_x', scopes: ['deployments:read'] });
    // Assess
    expect(narrow.roles).toEqual([]);
    expect(whole.roles).toEqual(['admin']);
    expect(whole.permissions.size).toBe(57);
    expect(oauth).toMatchObject({ kind: 'oauth', clientId: 'dplc_x', roles: [] });
  });

  it('keeps the user role of an admin who also holds it when the scopes cover it', () => {
    const both = { ...admin, roles: ['admin', 'user'] };
    const caller = delegatedCaller(both, grants, key(systemRole('user')!.permissions));
    expect(caller.roles).toEqual(['user']);
  });

  it('reads each of the owner’s roles from the directory (an unknown role grants nothing)', async () => {
    const directory = {
      permissionsOf: async (names: readonly string[]) => new Set(names.flatMap((n) => [...(grants.get(n) ?? [])])),
    };
    const caller = await callerOfCredential(
      directory,
      { ...admin, roles: ['admin', 'gone'] },
      { type: 'trigger', id: 'tr1', scopes: ['deployments:create'] },
    );
    expect(caller).toMatchObject({ kind: 'trigger', roles: ['gone'], ownerRoles: ['admin', 'gone'] });
    expect([...caller.permissions]).toEqual(['deployments:create']);
  });
});

describe('actsAsAdmin and the role-reserved powers', () => {
  it.each([
    ['an admin session', session(['admin']), true, true],
    ['an operator session', session(['operator']), false, false],
    [
      'an admin key scoped to deployments:create',
      delegatedCaller(admin, grants, key(['deployments:create'])),
      false,
      false,
    ],
    [
      'an admin key scoped to deployments:create + freezes:update',
      delegatedCaller(admin, grants, key(['deployments:create', 'freezes:update'])),
      true,
      false,
    ],
    ['an admin key scoped to analysis:manage', delegatedCaller(admin, grants, key(['analysis:manage'])), false, true],
    [
      'an operator key naming freezes:update (not held)',
      delegatedCaller({ id: 'o', tenantId: null, roles: ['operator'] }, grants, key(['freezes:update'])),
      false,
      false,
    ],
  ])('%s: override %s, retry %s', (_name, caller, override, retry) => {
    expect(mayOverrideFreeze(caller)).toBe(override);
    expect(actsAsAdmin(caller, 'freezes:update')).toBe(override);
    expect(mayRetryFailedAnalysis(caller)).toBe(retry);
  });

  it('reuses another user’s secrets only for the same user (any credential) or an admin session', () => {
    const adminKey = delegatedCaller(admin, grants, key(ALL));
    expect(mayReuseSecretsOf(session(['admin']), 'rita')).toBe(true);
    expect(mayReuseSecretsOf(adminKey, 'rita')).toBe(false);
    expect(mayReuseSecretsOf(adminKey, 'ada')).toBe(true);
    expect(mayReuseSecretsOf(session(['operator'], 'sam'), 'rita')).toBe(false);
  });

  it('refuses anything but a user session where a user login is needed', () => {
    const adminKey = delegatedCaller(admin, grants, key(ALL));
    expect(isAdminSession(session(['admin']))).toBe(true);
    expect(isAdminSession(adminKey)).toBe(false);
    expect(() => requireUserSession(adminKey, 'Changing it')).toThrow(ForbiddenError);
    expect(() => requireUserSession(session(['user']), 'Changing it')).not.toThrow();
  });
});

describe('actsWithEveryRoleOf', () => {
  const creator = { id: 'ada', tenantId: 't1', roles: ['admin'] };
  it.each([
    ['the creator, even with a narrow key', delegatedCaller(creator, grants, key(['oauth_clients:update'])), true],
    ['another admin of the same tenant', session(['admin'], 'bob', 't1'), true],
    ['a global admin', session(['admin'], 'bob', null), true],
    ['an admin of another tenant', session(['admin'], 'bob', 't2'), false],
    ['an operator of the same tenant', session(['operator'], 'sam', 't1'), false],
    [
      'another admin’s narrow key',
      delegatedCaller({ id: 'bob', tenantId: null, roles: ['admin'] }, grants, key(['oauth_clients:update'])),
      false,
    ],
  ])('%s: %s', (_name, caller, allowed) => {
    expect(actsWithEveryRoleOf(caller, creator)).toBe(allowed);
  });
});
