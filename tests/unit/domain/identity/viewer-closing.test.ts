// The identity use cases that revoke a credential or end a session tell the viewer closer after their write: logout,
// a password change, an API key revoke, a reused SSE refresh token, a user's deactivation and deletion; and a
// closer that fails never fails the request.
import { describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../../../domain/identity/api-keys.js';
import { changePassword } from '../../../../domain/identity/change-password.js';
import { logout } from '../../../../domain/identity/logout.js';
import { issueSseToken, refreshSseToken } from '../../../../domain/identity/sse-tokens.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { deleteUser, updateUser, type UsersDeps } from '../../../../domain/identity/users-admin.js';
import { systemRole } from '../../../../domain/identity/permissions.js';
import type { ViewerCloser, ViewerSelector } from '../../../../domain/streams/viewer-ports.js';
import { aUser, FakeUserStore, fakeHasher, fakeIds, FakeRoleRepository, signedIn } from '../../../fakes/identity.js';

const recorder = () => {
  const calls: ViewerSelector[] = [];
  const closer: ViewerCloser = {
    close: async (selector, reason) => {
      expect(reason).toBe('revoked');
      calls.push(selector);
    },
  };
  return { calls, closer };
};

const admin: Caller = {
  kind: 'user',
  userId: 'admin-1',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(systemRole('admin')?.permissions ?? []),
};

describe('closing viewers on revocation', () => {
  it('logout and a password change close the user connections; an API key revoke closes its own', async () => {
    // Arrange
    const { deps, caller } = await signedIn();
    const { calls, closer } = recorder();
    const withViewers = { ...deps, viewers: closer };
    const key = await createApiKey(withViewers, caller, { name: 'ci', scopes: ['deployments:read'] });
    // Act
    await revokeApiKey(withViewers, caller, key.api_key.id);
    await changePassword(withViewers, caller, {
      currentPassword: 'correct horse',
      newPassword: 'battery staple',
      ip: '1.1.1.1',
    });
    await logout(withViewers, caller);
    // Assess
    expect(calls).toEqual([
      { userId: caller.userId, apiKeyId: key.api_key.id },
      { userId: caller.userId },
      { userId: caller.userId },
    ]);
  });

  it('a reused SSE refresh token ends its session and closes its connections', async () => {
    // Arrange
    const { deps, caller } = await signedIn();
    const { calls, closer } = recorder();
    const withViewers = { ...deps, viewers: closer };
    const first = await issueSseToken(withViewers, caller);
    await refreshSseToken(withViewers, { sessionId: first.session_id, refreshToken: first.refresh_token });
    // Act
    const replay = refreshSseToken(withViewers, { sessionId: first.session_id, refreshToken: first.refresh_token });
    // Assess
    await expect(replay).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect(calls).toEqual([{ userId: caller.userId, sseSessionId: first.session_id }]);
  });

  it('a deactivated or deleted user has every connection closed', async () => {
    // Arrange
    const users = new FakeUserStore();
    await users.create(aUser({ id: 'u-a', email: 'a@example.com', username: 'a', roles: ['user'] }));
    await users.create(aUser({ id: 'u-b', email: 'b@example.com', username: 'b', roles: ['user'] }));
    const { calls, closer } = recorder();
    const deps: UsersDeps = {
      users,
      roles: new FakeRoleRepository(),
      apiKeys: (await signedIn()).apiKeys,
      hasher: fakeHasher,
      ids: fakeIds(),
      clock: { now: () => new Date('2026-11-22T10:00:00.000Z') },
      identityProviders: { get: async () => undefined },
      viewers: closer,
    };
    // Act
    await updateUser(deps, admin, 'u-a', { status: 'inactive' });
    await deleteUser(deps, admin, 'u-b');
    // Assess
    expect(calls).toEqual([{ userId: 'u-a' }, { userId: 'u-b' }]);
  });

  it('a closer that fails does not fail the logout', async () => {
    // Arrange
    const { deps, caller, users } = await signedIn();
    const failing: ViewerCloser = { close: () => Promise.reject(new Error('gateway down')) };
    // Act
    const answer = await logout({ ...deps, viewers: failing }, caller);
    // Assess
    expect(answer.message).toContain('Logged out');
    expect((await users.get(caller.userId))?.tokensValidAfter).toBeGreaterThan(0);
  });
});
