import { describe, expect, it } from 'vitest';
import { AuthRateLimitError, InvalidCredentialsError } from '../../../../domain/identity/errors.js';
import { login } from '../../../../domain/identity/login.js';
import { PERMISSIONS, SYSTEM_ROLES } from '../../../../domain/identity/permissions.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';

describe('permissions', () => {
  it('are exactly the 57 of decisions.md, and admin holds them all', () => {
    expect(PERMISSIONS).toHaveLength(57);
    expect(new Set(PERMISSIONS.map((p) => p.name)).size).toBe(57);
    expect(SYSTEM_ROLES.find((r) => r.name === 'admin')?.permissions).toHaveLength(57);
    const operator = new Set(SYSTEM_ROLES.find((r) => r.name === 'operator')?.permissions);
    expect(operator.has('freezes:create')).toBe(true);
    expect(operator.has('users:read')).toBe(false);
    const user = new Set(SYSTEM_ROLES.find((r) => r.name === 'user')?.permissions);
    expect(user.has('deployments:create')).toBe(true);
    expect(user.has('deployments:cancel')).toBe(false);
  });
});

describe('login', () => {
  it('refuses a user without a local password (signs in through an identity provider) like a wrong password', async () => {
    // Prepare
    const { deps, users, throttle } = identityFakes();
    await users.create(aUser({ passwordHash: null }));
    let burned = 0;
    const counting = { ...deps, hasher: { ...deps.hasher, burnTime: async () => void (burned += 1) } };
    // Act
    const refused = await login(counting, { email: 'ada@example.com', password: '', ip: '1.2.3.9' }).catch(
      (e: unknown) => e,
    );
    // Assess
    expect(refused).toBeInstanceOf(InvalidCredentialsError);
    expect((refused as Error).message).toBe('Invalid email or password.');
    expect(burned).toBe(1);
    expect(throttle.failures.get('1.2.3.9')).toHaveLength(1); // counted toward the address's lockout
  });

  it('starts a session: access token, refresh token, the user with permissions', async () => {
    // Prepare
    const { deps, users, sessions } = identityFakes();
    await users.create(aUser());
    // Act
    const outcome = await login(deps, { email: 'ADA@example.com', password: 'correct horse', ip: '1.2.3.4' });
    // Assess
    if (outcome.kind !== 'session') throw new Error('expected a session');
    expect(outcome.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      user: { email: 'ada@example.com', roles: ['operator'] },
    });
    expect(outcome.body.user.permissions).toContain('deployments:create');
    expect(sessions.sessions.get(deps.random.hash(outcome.refreshToken))).toMatchObject({
      userId: aUser().id,
      rotated: false,
    });
    expect((await users.get(aUser().id))?.lastLoginAt).toBe('2026-11-22T10:00:00.000Z');
  });

  it('answers the same INVALID_CREDENTIALS for an unknown email and a wrong password', async () => {
    const { deps, users } = identityFakes();
    await users.create(aUser());
    const unknown = login(deps, { email: 'nobody@example.com', password: 'x', ip: '1.2.3.4' });
    const wrong = login(deps, { email: 'ada@example.com', password: 'x', ip: '1.2.3.4' });
    await expect(unknown).rejects.toThrow(InvalidCredentialsError);
    await expect(wrong).rejects.toThrow(new InvalidCredentialsError().message);
  });

  it('refuses an inactive or locked account with INVALID_CREDENTIALS', async () => {
    for (const status of ['inactive', 'locked'] as const) {
      const { deps, users } = identityFakes();
      await users.create(aUser({ status }));
      await expect(
        login(deps, { email: 'ada@example.com', password: 'correct horse', ip: '1.2.3.4' }),
      ).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    }
  });

  it('locks an address out after 10 failures, with Retry-After, and lets other addresses in', async () => {
    // Prepare
    const { deps, users, clock } = identityFakes();
    await users.create(aUser());
    const attempt = (ip: string, password = 'wrong') => login(deps, { email: 'ada@example.com', password, ip });
    // Act
    for (let i = 0; i < 10; i += 1) await expect(attempt('9.9.9.9')).rejects.toThrow(InvalidCredentialsError);
    const eleventh = attempt('9.9.9.9');
    // Assess
    await expect(eleventh).rejects.toThrow(AuthRateLimitError);
    await expect(attempt('9.9.9.9', 'correct horse')).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
      retryAfterSeconds: 300,
    });
    await expect(attempt('8.8.8.8', 'correct horse')).resolves.toMatchObject({ kind: 'session' });
    clock.advance(301_000);
    await expect(attempt('9.9.9.9', 'correct horse')).resolves.toMatchObject({ kind: 'session' });
  });

  it('answers requires_2fa with a pending token when two-factor is on, and starts no session', async () => {
    const { deps, users, sessions } = identityFakes();
    await users.create(aUser({ twoFactor: { enabled: true, secret: 'enc', lastStep: null } }));
    const outcome = await login(deps, { email: 'ada@example.com', password: 'correct horse', ip: '1.2.3.4' });
    expect(outcome.kind).toBe('two_factor');
    if (outcome.kind !== 'two_factor') return;
    expect(outcome.body.requires_2fa).toBe(true);
    expect((await deps.tokens.verify(outcome.body.pending_token)).type).toBe('two_factor_pending');
    expect(sessions.sessions.size).toBe(0);
  });
});
