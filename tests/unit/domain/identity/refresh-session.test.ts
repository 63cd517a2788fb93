import { describe, expect, it } from 'vitest';
import { login } from '../../../../domain/identity/login.js';
import { refreshSession } from '../../../../domain/identity/refresh-session.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';

const start = async () => {
  const fakes = identityFakes();
  await fakes.users.create(aUser());
  const outcome = await login(fakes.deps, { email: 'ada@example.com', password: 'correct horse', ip: '1.1.1.1' });
  if (outcome.kind !== 'session') throw new Error('expected a session');
  return { ...fakes, refreshToken: outcome.refreshToken };
};

describe('refreshSession', () => {
  it('rotates: a new access token and a new refresh token of the same family', async () => {
    const { deps, sessions, refreshToken } = await start();
    const next = await refreshSession(deps, refreshToken);
    expect(next.refreshToken).not.toBe(refreshToken);
    expect(next.body.access_token).toMatch(/^fake\./);
    const old = sessions.sessions.get(deps.random.hash(refreshToken));
    const fresh = sessions.sessions.get(deps.random.hash(next.refreshToken));
    expect(old?.rotated).toBe(true);
    expect(fresh?.familyId).toBe(old?.familyId);
  });

  it('detects reuse of a rotated token and revokes the whole family', async () => {
    // Prepare
    const { deps, refreshToken } = await start();
    const next = await refreshSession(deps, refreshToken);
    // Act
    const reuse = refreshSession(deps, refreshToken);
    // Assess
    await expect(reuse).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
      message: expect.stringContaining('already used'),
    });
    await expect(refreshSession(deps, next.refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('refuses no token, an unknown one, an expired one, and one issued before a logout', async () => {
    const { deps, users, clock, refreshToken } = await start();
    await expect(refreshSession(deps, undefined)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(refreshSession(deps, 'forged')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    clock.advance(1);
    await users.revokeTokens(aUser().id, clock.now());
    await expect(refreshSession(deps, refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const later = await start();
    later.clock.advance(15 * 86_400_000);
    await expect(refreshSession(later.deps, later.refreshToken)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });
});
