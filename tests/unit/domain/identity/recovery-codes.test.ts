import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { getMe } from '../../../../domain/identity/get-me.js';
import { login } from '../../../../domain/identity/login.js';
import { normalizeRecoveryCode } from '../../../../domain/identity/recovery-codes.js';
import {
  disableTwoFactor,
  enableTwoFactor,
  regenerateRecoveryCodes,
  verifyTwoFactor,
} from '../../../../domain/identity/two-factor.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const FORMAT = /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/;

/** A user who set up 2FA (not on yet), the fakes, a session caller, and helpers for codes and pending logins. */
const setUp = async () => {
  const fakes = identityFakes();
  const user = aUser();
  await fakes.users.create({
    ...user,
    twoFactor: { enabled: false, secret: fakes.deps.cipher.encrypt(SECRET, `totp:${user.id}`), lastStep: null },
  });
  const caller: Caller = { kind: 'user', userId: user.id, tenantId: null, roles: user.roles, permissions: new Set() };
  /** A right code of a step not used yet: the clock moves one step on each time. */
  const freshCode = async () => {
    fakes.clock.advance(30_000);
    return generate({ secret: SECRET, epoch: Math.floor(fakes.clock.now().getTime() / 1000) });
  };
  const pendingToken = async () => {
    fakes.clock.advance(1);
    const outcome = await login(fakes.deps, { email: user.email, password: 'correct horse', ip: '9.9.9.9' });
    if (outcome.kind !== 'two_factor') throw new Error('expected a pending login');
    return outcome.body.pending_token;
  };
  let n = 0;
  const verify = async (code: string) =>
    verifyTwoFactor(fakes.deps, { code, pendingToken: await pendingToken(), ip: `10.0.0.${(n += 1)}` });
  const stored = () => fakes.users.users.get(user.id)!.twoFactor;
  const enable = async () => (await enableTwoFactor(fakes.deps, caller, await freshCode())).recovery_codes;
  return { ...fakes, user, caller, freshCode, verify, stored, enable };
};

describe('recovery codes are issued with 2FA', () => {
  it('enable answers 10 distinct codes once and stores only their hashes', async () => {
    // Prepare
    const { enable, stored, deps, caller } = await setUp();
    // Act
    const codes = await enable();
    // Assess
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(FORMAT);
    const hashes = stored().recoveryCodes ?? [];
    expect(hashes).toHaveLength(10);
    const storedText = JSON.stringify(stored());
    for (const code of codes) {
      expect(storedText).not.toContain(code);
      expect(storedText).not.toContain(code.replace('-', ''));
    }
    const me = await getMe(deps, caller);
    expect(me.two_factor_recovery_codes_left).toBe(10);
    expect(JSON.stringify(me)).not.toContain(codes[0]!);
  });

  it('reads typed codes leniently: case, spaces, hyphens and Crockford look-alikes', () => {
    expect(normalizeRecoveryCode(' AB1C0-DEFGH ')).toBe('ab1c0defgh');
    expect(normalizeRecoveryCode('abIc0 deLgh')).toBe('ab1c0de1gh');
    expect(normalizeRecoveryCode('abcOd-efghj')).toBe('abc0defghj');
    expect(normalizeRecoveryCode('abcud-efghj')).toBeUndefined();
    expect(normalizeRecoveryCode('abcde-fghj')).toBeUndefined();
    expect(normalizeRecoveryCode('123456')).toBeUndefined();
  });
});

describe('a recovery code signs in once', () => {
  it('works in place of a TOTP code, then never again', async () => {
    const { enable, verify, stored, deps, caller } = await setUp();
    const [code] = await enable();
    await expect(verify(code!.toUpperCase())).resolves.toMatchObject({ body: { token_type: 'Bearer' } });
    await expect(verify(code!)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(stored().recoveryCodes).toHaveLength(9);
    expect((await getMe(deps, caller)).two_factor_recovery_codes_left).toBe(9);
  });

  it('two concurrent uses of one code: exactly one wins', async () => {
    const { enable, verify, stored } = await setUp();
    const [code] = await enable();
    const outcomes = await Promise.allSettled([verify(code!), verify(code!), verify(code!)]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((o) => o.status === 'rejected'))
      expect(o.reason).toMatchObject({ code: 'INVALID_CREDENTIALS' });
    expect(stored().recoveryCodes).toHaveLength(9);
  });

  it('wrong recovery codes count toward the user lockout, and a right one is then refused too', async () => {
    const { enable, verify, stored } = await setUp();
    const codes = await enable();
    for (let i = 0; i < 10; i += 1)
      await expect(verify('zzzzz-zzzzz')).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(verify(codes[0]!)).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
      extra: { reason: 'too_many_failed_two_factor_codes' },
    });
    expect(stored().recoveryCodes).toHaveLength(10);
  });

  it('is refused where the authenticator is needed: disable and regenerate', async () => {
    const { enable, deps, caller, stored } = await setUp();
    const [code] = await enable();
    await expect(disableTwoFactor(deps, caller, code!)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(regenerateRecoveryCodes(deps, caller, code!)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(stored()).toMatchObject({ enabled: true });
    expect(stored().recoveryCodes).toHaveLength(10);
  });
});

describe('recovery codes are replaced and removed', () => {
  it('regenerate answers 10 new codes; the old ones stop working', async () => {
    const { enable, freshCode, verify, deps, caller, stored } = await setUp();
    const old = await enable();
    const { recovery_codes: fresh } = await regenerateRecoveryCodes(deps, caller, await freshCode());
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => old.includes(c))).toEqual([]);
    expect(stored().recoveryCodes).toHaveLength(10);
    await expect(verify(old[1]!)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    await expect(verify(fresh[1]!)).resolves.toMatchObject({ body: { token_type: 'Bearer' } });
  });

  it('regenerate needs a right code, 2FA on, and a user session', async () => {
    const { enable, freshCode, deps, caller, stored } = await setUp();
    await expect(regenerateRecoveryCodes(deps, caller, await freshCode())).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await enable();
    const before = stored().recoveryCodes;
    await expect(regenerateRecoveryCodes(deps, caller, '000000')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    const key = { ...caller, kind: 'api_key' } as unknown as Caller;
    await expect(regenerateRecoveryCodes(deps, key, await freshCode())).rejects.toMatchObject({
      code: 'FORBIDDEN',
      details: { reason: 'user_credentials_required' },
    });
    expect(stored().recoveryCodes).toEqual(before);
  });

  it('disable removes every code: none can be used, and /me says 0', async () => {
    const { enable, freshCode, deps, caller, stored } = await setUp();
    await enable();
    const [hash] = stored().recoveryCodes ?? [];
    await disableTwoFactor(deps, caller, await freshCode());
    expect(stored().recoveryCodes ?? []).toEqual([]);
    expect(await deps.users.useRecoveryCode(caller.userId, hash!)).toBe(false);
    expect((await getMe(deps, caller)).two_factor_recovery_codes_left).toBe(0);
  });
});
