import { describe, expect, it } from 'vitest';
import { createApiKey, listApiKeys, revokeApiKey } from '../../../../domain/identity/api-keys.js';
import { authenticate } from '../../../../domain/identity/authenticate.js';
import { getMe } from '../../../../domain/identity/get-me.js';
import { aUser, signedIn } from '../../../fakes/identity.js';

describe('API keys', () => {
  it('are shown once, stored only as a hash, and authenticate narrowed to their scopes', async () => {
    // Prepare
    const { deps, caller, apiKeys } = await signedIn();
    // Act
    const created = await createApiKey(deps, caller, {
      name: 'ci',
      scopes: ['deployments:read', 'deployments:create'],
    });
    const asKey = await authenticate(deps, `Bearer ${created.full_key}`, '5.6.7.8');
    // Assess
    expect(created.full_key).toMatch(/^dpl_/);
    expect(created.api_key).toMatchObject({
      name: 'ci',
      key_prefix: created.full_key.slice(0, 12),
      scopes: ['deployments:read', 'deployments:create'],
      expires_at: null,
    });
    expect(JSON.stringify([...apiKeys.keys.values()])).not.toContain(created.full_key);
    expect(asKey).toMatchObject({ kind: 'api_key', userId: caller.userId, apiKeyId: created.api_key.id });
    expect([...asKey.permissions].sort()).toEqual(['deployments:create', 'deployments:read']);
    expect((await listApiKeys(deps, caller)).api_keys[0]).toMatchObject({
      last_used_ip: '5.6.7.8',
      last_used_at: '2026-11-22T10:00:00.000Z',
    });
  });

  it('records use at most once a minute per key and address', async () => {
    const { deps, caller, apiKeys, clock } = await signedIn();
    const { full_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['deployments:read'] });
    for (let i = 0; i < 5; i += 1) await authenticate(deps, `Bearer ${full_key}`, '5.6.7.8');
    clock.advance(61_000);
    await authenticate(deps, `Bearer ${full_key}`, '5.6.7.8');
    expect(apiKeys.uses).toHaveLength(2);
  });

  it('refuses unknown scopes (400) and scopes wider than the creator (403)', async () => {
    const { deps, caller } = await signedIn();
    await expect(
      createApiKey(deps, caller, { name: 'x', scopes: ['deployments:read', 'nope:nope'] }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'scopes.1' }] },
    });
    await expect(createApiKey(deps, caller, { name: 'x', scopes: ['users:delete'] })).rejects.toMatchObject({
      code: 'INSUFFICIENT_PERMISSIONS',
    });
  });

  it('cannot create keys with a key', async () => {
    const { deps, caller } = await signedIn();
    const { full_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['api_keys:create'] });
    const asKey = await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1');
    await expect(createApiKey(deps, asKey, { name: 'y', scopes: ['api_keys:create'] })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });

  it('answers INVALID_CREDENTIALS once revoked or expired, and when the creator is deactivated', async () => {
    const { deps, caller, clock, users } = await signedIn();
    const revoked = await createApiKey(deps, caller, { name: 'a', scopes: ['deployments:read'] });
    const expiring = await createApiKey(deps, caller, { name: 'b', scopes: ['deployments:read'], expires_in_days: 1 });
    const other = await createApiKey(deps, caller, { name: 'c', scopes: ['deployments:read'] });
    await revokeApiKey(deps, caller, revoked.api_key.id);
    await expect(authenticate(deps, `Bearer ${revoked.full_key}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await expect(revokeApiKey(deps, caller, revoked.api_key.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    clock.advance(86_400_000);
    await expect(authenticate(deps, `Bearer ${expiring.full_key}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    users.users.set(caller.userId, { ...aUser(), status: 'inactive' });
    await expect(authenticate(deps, `Bearer ${other.full_key}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
  });

  it('narrows to the creator’s current permissions when those shrink', async () => {
    const { deps, caller, users } = await signedIn();
    const { full_key } = await createApiKey(deps, caller, {
      name: 'ci',
      scopes: ['deployments:read', 'deployments:cancel'],
    });
    users.users.set(caller.userId, { ...aUser(), roles: ['user'] }); // user role: no deployments:cancel
    const asKey = await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1');
    expect([...asKey.permissions]).toEqual(['deployments:read']);
  });

  it("acts in the user's current tenant, not the one it was created in", async () => {
    // Prepare
    const { deps, caller, users } = await signedIn();
    const { full_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['deployments:read'] });
    // Act
    users.users.set(caller.userId, { ...aUser(), tenantId: 'bbbbbbbb-0000-4000-8000-000000000000' });
    const asKey = await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1');
    // Assess
    expect(asKey.tenantId).toBe('bbbbbbbb-0000-4000-8000-000000000000');
  });

  it('cannot be created, listed or revoked with a key (user credentials only)', async () => {
    const { deps, caller } = await signedIn();
    const { full_key } = await createApiKey(deps, caller, { name: 'ci', scopes: ['api_keys:create'] });
    const asKey = await authenticate(deps, `Bearer ${full_key}`, '1.1.1.1');
    await expect(createApiKey(deps, asKey, { name: 'y', scopes: [] })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      details: { reason: 'user_credentials_required' },
    });
  });
});

describe('GET /auth/me with an API key', () => {
  it('answers what the key acts with (not its owner’s roles and permissions) and names the key; a session names none', async () => {
    // Prepare
    const { deps, caller } = await signedIn();
    const created = await createApiKey(deps, caller, { name: 'ci', scopes: ['deployments:read'] });
    const asKey = await authenticate(deps, `Bearer ${created.full_key}`, '5.6.7.8');
    // Act
    const byKey = await getMe(deps, asKey);
    const bySession = await getMe(deps, caller);
    // Assess
    expect([byKey.roles, byKey.permissions, byKey.credential]).toEqual([
      [],
      ['deployments:read'],
      { type: 'api_key', id: created.api_key.id, name: 'ci', scopes: ['deployments:read'] },
    ]);
    expect(bySession.credential).toBeNull();
    expect(bySession.roles).toEqual(caller.roles);
    expect(bySession.permissions).toHaveLength(caller.permissions.size);
  });
});
