import { describe, expect, it } from 'vitest';
import { ConflictError, ValidationError } from '../../../../domain/errors.js';
import { changePassword } from '../../../../domain/identity/change-password.js';
import { AuthRateLimitError } from '../../../../domain/identity/errors.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';

const caller: Caller = {
  kind: 'user',
  userId: aUser().id,
  tenantId: null,
  roles: ['operator'],
  permissions: new Set(),
};
const command = { currentPassword: 'correct horse', newPassword: 'battery staple', ip: '1.2.3.4' };

describe('changePassword', () => {
  it('replaces the hash, revokes every earlier token and starts a session issued after the revocation', async () => {
    // Prepare
    const { deps, users, sessions, clock } = identityFakes();
    await users.create(aUser());
    // Act
    const session = await changePassword(deps, caller, command);
    // Assess
    const user = await users.get(aUser().id);
    expect(user?.passwordHash).toBe('hashed:battery staple');
    expect(user?.tokensValidAfter).toBe(clock.now().getTime());
    const stored = sessions.sessions.get(deps.random.hash(session.refreshToken));
    expect(stored!.issuedAt).toBeGreaterThan(user!.tokensValidAfter);
    expect(session.body.user.email).toBe('ada@example.com');
  });

  it('refuses a wrong current password with a 400 on the field, counted toward the address’s lockout, and changes nothing', async () => {
    // Prepare
    const { deps, users, throttle } = identityFakes();
    await users.create(aUser());
    // Act
    const refused = await changePassword(deps, caller, { ...command, currentPassword: 'wrong' }).catch((e) => e);
    // Assess
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).fields[0]?.field).toBe('current_password');
    expect(throttle.failures.get('1.2.3.4')).toHaveLength(1);
    expect((await users.get(aUser().id))?.passwordHash).toBe('hashed:correct horse');
    expect((await users.get(aUser().id))?.tokensValidAfter).toBe(0);
  });

  it('refuses during a lockout even with the right password', async () => {
    // Prepare
    const { deps, users, throttle, clock } = identityFakes();
    await users.create(aUser());
    throttle.lockedUntil.set('1.2.3.4', clock.now().getTime() + 60_000);
    // Act / Assess
    await expect(changePassword(deps, caller, command)).rejects.toBeInstanceOf(AuthRateLimitError);
    expect((await users.get(aUser().id))?.passwordHash).toBe('hashed:correct horse');
  });

  it('refuses an unchanged password and an account without a local password', async () => {
    // Prepare
    const { deps, users } = identityFakes();
    await users.create(aUser());
    // Act / Assess
    await expect(changePassword(deps, caller, { ...command, newPassword: 'correct horse' })).rejects.toBeInstanceOf(
      ValidationError,
    );
    users.users.set(aUser().id, aUser({ passwordHash: null }));
    await expect(changePassword(deps, caller, command)).rejects.toBeInstanceOf(ConflictError);
    expect((await users.get(aUser().id))?.passwordHash).toBeNull();
  });

  it('writes only over the hash it checked: a change in between wins and this one is refused', async () => {
    // Prepare
    const { deps, users } = identityFakes();
    await users.create(aUser());
    const racing = {
      ...deps,
      hasher: {
        ...deps.hasher,
        hash: async (password: string) => {
          users.users.set(aUser().id, aUser({ passwordHash: 'hashed:someone else' }));
          return deps.hasher.hash(password);
        },
      },
    };
    // Act / Assess
    await expect(changePassword(racing, caller, command)).rejects.toBeInstanceOf(ConflictError);
    expect((await users.get(aUser().id))?.passwordHash).toBe('hashed:someone else');
  });
});
