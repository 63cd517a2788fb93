import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { login } from '../../../../domain/identity/login.js';
import { disableTwoFactor, verifyTwoFactor } from '../../../../domain/identity/two-factor.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

/** A user with 2FA on, the fakes, and codes for the fake clock's time. */
const withTwoFactor = async () => {
  const fakes = identityFakes();
  const user = aUser();
  await fakes.users.create({
    ...user,
    twoFactor: { enabled: true, secret: fakes.deps.cipher.encrypt(SECRET, `totp:${user.id}`), lastStep: null },
  });
  const step = () => Math.floor(fakes.clock.now().getTime() / 30_000);
  const codeAt = (s: number) => generate({ secret: SECRET, epoch: s * 30 + 1 });
  const rightCode = () => codeAt(step());
  const wrongCode = async () => ((Number(await rightCode()) + 1) % 1_000_000).toString().padStart(6, '0');
  const pendingToken = async () => {
    fakes.clock.advance(1); // the fake token service has no jti: tokens differ by their issue time
    const outcome = await login(fakes.deps, { email: user.email, password: 'correct horse', ip: '9.9.9.9' });
    if (outcome.kind !== 'two_factor') throw new Error('expected a pending login');
    return outcome.body.pending_token;
  };
  // A different address per attempt: the per-address lockout is not what these tests are about.
  let n = 0;
  const verify = (code: string, pending: string) =>
    verifyTwoFactor(fakes.deps, { code, pendingToken: pending, ip: `10.0.0.${(n += 1)}` });
  return { ...fakes, user, step, codeAt, rightCode, wrongCode, pendingToken, verify };
};

describe('two-factor codes cannot be brute-forced', () => {
  it('a pending token dies after 5 wrong codes: the right one is then refused with INVALID_TOKEN', async () => {
    // Prepare
    const { verify, pendingToken, rightCode, wrongCode } = await withTwoFactor();
    const pending = await pendingToken();
    // Act
    for (let i = 0; i < 5; i += 1)
      await expect(verify(await wrongCode(), pending)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    const sixth = verify(await wrongCode(), pending);
    const right = verify(await rightCode(), pending);
    // Assess
    await expect(sixth).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(right).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(verify(await rightCode(), await pendingToken())).resolves.toMatchObject({
      body: { token_type: 'Bearer' },
    });
  });

  it('a pending token works once: a second verify with a valid code is refused', async () => {
    const { verify, pendingToken, step, codeAt } = await withTwoFactor();
    const pending = await pendingToken();
    await expect(verify(await codeAt(step()), pending)).resolves.toMatchObject({ body: { token_type: 'Bearer' } });
    await expect(verify(await codeAt(step() + 1), pending)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('locks the user out after 10 wrong codes across pending tokens, whatever the address, with the spec 429', async () => {
    // Prepare
    const { verify, pendingToken, rightCode, wrongCode, clock } = await withTwoFactor();
    const tokens = [await pendingToken(), await pendingToken(), await pendingToken(), await pendingToken()];
    // Act: 5 + 5 wrong codes are answered 401, the 11th is refused
    for (let i = 0; i < 10; i += 1)
      await expect(verify(await wrongCode(), tokens[Math.floor(i / 5)] as string)).rejects.toMatchObject({
        code: 'INVALID_CREDENTIALS',
      });
    const eleventh = verify(await wrongCode(), tokens[2] as string);
    // Assess
    await expect(eleventh).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
      retryAfterSeconds: 900,
      extra: { reason: 'too_many_failed_two_factor_codes', retry_after_secs: 900 },
    });
    await expect(verify(await rightCode(), tokens[3] as string)).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
    });
    clock.advance(900_000);
    await expect(verify(await rightCode(), await pendingToken())).resolves.toMatchObject({
      body: { token_type: 'Bearer' },
    });
  });

  it('does not count right codes as failures', async () => {
    const { verify, pendingToken, rightCode, wrongCode, clock } = await withTwoFactor();
    for (let i = 0; i < 12; i += 1) {
      if (i % 2 === 0)
        await expect(verify(await wrongCode(), await pendingToken())).rejects.toMatchObject({
          code: 'INVALID_CREDENTIALS',
        });
      else await expect(verify(await rightCode(), await pendingToken())).resolves.toBeDefined();
      clock.advance(30_000); // the next step: a used code never works twice
    }
  });

  it('counts wrong codes at disable toward the same lockout', async () => {
    const { deps, user, verify, pendingToken, rightCode, wrongCode } = await withTwoFactor();
    const caller: Caller = { kind: 'user', userId: user.id, tenantId: null, roles: user.roles, permissions: new Set() };
    for (let i = 0; i < 10; i += 1)
      await expect(disableTwoFactor(deps, caller, await wrongCode())).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
      });
    await expect(disableTwoFactor(deps, caller, await rightCode())).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
    });
    await expect(verify(await rightCode(), await pendingToken())).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
    });
  });

  it('still counts wrong codes toward the address lockout', async () => {
    const { deps, pendingToken, wrongCode } = await withTwoFactor();
    const pendings = [await pendingToken(), await pendingToken(), await pendingToken()];
    for (let i = 0; i < 10; i += 1) {
      await expect(
        verifyTwoFactor(deps, {
          code: await wrongCode(),
          pendingToken: pendings[Math.floor(i / 5)] as string,
          ip: '7.7.7.7',
        }),
      ).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    }
    await expect(login(deps, { email: aUser().email, password: 'wrong', ip: '7.7.7.7' })).rejects.toMatchObject({
      code: 'AUTH_RATE_LIMIT_EXCEEDED',
      extra: { reason: 'too_many_failed_logins' },
    });
  });

  it('checks at most 5 codes per token and 10 per user when 20 wrong codes arrive at once', async () => {
    // Prepare: count the codes actually compared with the secret
    const { deps, pendingToken, wrongCode } = await withTwoFactor();
    let checked = 0;
    const counting = {
      ...deps,
      totp: {
        ...deps.totp,
        matchStep: async (...args: Parameters<typeof deps.totp.matchStep>) => (
          (checked += 1),
          deps.totp.matchStep(...args)
        ),
      },
    };
    const tokens = [await pendingToken(), await pendingToken(), await pendingToken(), await pendingToken()];
    const code = await wrongCode();
    // Act
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        verifyTwoFactor(counting, { code, pendingToken: tokens[i % 2] as string, ip: `10.1.0.${i}` }),
      ),
    );
    // Assess: two tokens, 5 attempts each
    const codes = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code: string }).code : 'OK'));
    expect(codes.filter((c) => c === 'INVALID_CREDENTIALS')).toHaveLength(10);
    expect(codes.filter((c) => c === 'INVALID_TOKEN')).toHaveLength(10);
    expect(checked).toBe(10);
    // And the user is at the limit now: the next attempt on a fresh token is refused.
    await expect(
      verifyTwoFactor(deps, { code, pendingToken: tokens[2] as string, ip: '10.2.0.1' }),
    ).rejects.toMatchObject({ code: 'AUTH_RATE_LIMIT_EXCEEDED' });
  });
});
