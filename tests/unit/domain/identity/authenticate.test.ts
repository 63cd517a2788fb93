import { describe, expect, it } from 'vitest';
import { authenticate, authorize, bearerToken } from '../../../../domain/identity/authenticate.js';
import { login } from '../../../../domain/identity/login.js';
import { logout } from '../../../../domain/identity/logout.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';

const session = async (deps: ReturnType<typeof identityFakes>['deps']) => {
  const outcome = await login(deps, { email: 'ada@example.com', password: 'correct horse', ip: '1.1.1.1' });
  if (outcome.kind !== 'session') throw new Error('expected a session');
  return outcome;
};

describe('bearerToken', () => {
  it.each([
    [undefined, 'MISSING_AUTH_HEADER'],
    ['', 'UNAUTHORIZED'],
    ['   ', 'UNAUTHORIZED'],
    ['Bearer', 'UNAUTHORIZED'],
    ['Basic abc', 'INVALID_AUTH_HEADER'],
    ['abc', 'INVALID_AUTH_HEADER'],
    ['Bearer a b', 'INVALID_AUTH_HEADER'],
  ])('%j answers %s', (header, code) => {
    expect(() => bearerToken(header)).toThrow(expect.objectContaining({ code }));
  });

  it('accepts any case of the scheme', () => {
    expect(bearerToken('bearer abc')).toBe('abc');
  });
});

describe('authenticate', () => {
  it('turns a valid access token into the caller with its permissions', async () => {
    const { deps, users } = identityFakes();
    await users.create(aUser());
    const { body } = await session(deps);
    const caller = await authenticate(deps, `Bearer ${body.access_token}`, '1.1.1.1');
    expect(caller).toMatchObject({
      kind: 'user',
      userId: aUser().id,
      tenantId: null,
      roles: ['operator'],
      userName: 'Ada',
    });
    expect(() => authorize(caller, 'deployments:create')).not.toThrow();
    expect(() => authorize(caller, 'users:delete')).toThrow(
      expect.objectContaining({ code: 'INSUFFICIENT_PERMISSIONS' }),
    );
  });

  it('answers TOKEN_EXPIRED after an hour and INVALID_TOKEN for garbage', async () => {
    const { deps, users, clock } = identityFakes();
    await users.create(aUser());
    const { body } = await session(deps);
    await expect(authenticate(deps, 'Bearer not-a-token', '1.1.1.1')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    clock.advance(3600_000);
    await expect(authenticate(deps, `Bearer ${body.access_token}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'TOKEN_EXPIRED',
    });
  });

  it('answers TWO_FACTOR_REQUIRED for a pending 2FA token', async () => {
    const { deps, users } = identityFakes();
    await users.create(aUser({ twoFactor: { enabled: true, secret: 'enc', lastStep: null } }));
    const outcome = await login(deps, { email: 'ada@example.com', password: 'correct horse', ip: '1.1.1.1' });
    if (outcome.kind !== 'two_factor') throw new Error('expected 2FA');
    await expect(authenticate(deps, `Bearer ${outcome.body.pending_token}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'TWO_FACTOR_REQUIRED',
    });
  });

  it('stops every token at once after logout, but not tokens issued after it', async () => {
    // Prepare
    const { deps, users, clock } = identityFakes();
    await users.create(aUser());
    const first = await session(deps);
    const caller = await authenticate(deps, `Bearer ${first.body.access_token}`, '1.1.1.1');
    // Act
    clock.advance(1);
    await logout(deps, caller);
    clock.advance(1);
    const second = await session(deps);
    // Assess
    await expect(authenticate(deps, `Bearer ${first.body.access_token}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    await expect(authenticate(deps, `Bearer ${second.body.access_token}`, '1.1.1.1')).resolves.toMatchObject({
      userId: aUser().id,
    });
  });

  it('answers FORBIDDEN when the account is no longer active', async () => {
    const { deps, users } = identityFakes();
    await users.create(aUser());
    const { body } = await session(deps);
    users.users.set(aUser().id, { ...aUser(), status: 'inactive' });
    await expect(authenticate(deps, `Bearer ${body.access_token}`, '1.1.1.1')).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
