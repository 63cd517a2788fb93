import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { otplibTotp } from '../../../../infra/crypto/totp.js';

// RFC 6238 appendix B's SHA-1 secret, the ASCII "12345678901234567890", in base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const at = new Date('2026-03-01T12:00:10Z');
const step = Math.floor(at.getTime() / 1000 / 30);

/** The code of a time step, made by otplib at an explicit epoch inside that step. */
const codeOf = (timeStep: number, secret = RFC_SECRET) => generate({ secret, epoch: timeStep * 30 + 7 });

describe('otplibTotp.matchStep', () => {
  it.each([
    [59, '287082', 1],
    [1111111109, '081804', 37037036],
    [2000000000, '279037', 66666666],
  ])('matches RFC 6238 test vector at %i s', async (epochSeconds, code, expected) => {
    const matched = await otplibTotp.matchStep(RFC_SECRET, code, new Date(epochSeconds * 1000));

    expect(matched).toBe(expected);
  });

  it.each([
    ['the current step', 0],
    ['the previous step', -1],
    ['the next step', 1],
  ])('accepts a code of %s and answers its exact step number', async (_name, offset) => {
    // Prepare
    const code = await codeOf(step + offset);

    // Act
    const matched = await otplibTotp.matchStep(RFC_SECRET, code, at);

    // Assess
    expect(matched).toBe(step + offset);
  });

  it.each([
    ['two steps behind', -2],
    ['two steps ahead', 2],
  ])('refuses a code %s', async (_name, offset) => {
    const code = await codeOf(step + offset);
    const window = await Promise.all([-1, 0, 1].map((near) => codeOf(step + near)));

    const matched = await otplibTotp.matchStep(RFC_SECRET, code, at);

    expect(window).not.toContain(code); // so the refusal is about the window, not a collision
    expect(matched).toBeUndefined();
  });

  it('keeps the window on step boundaries: first and last second of a step', async () => {
    const first = new Date(step * 30 * 1000);
    const last = new Date((step * 30 + 29) * 1000);

    const previous = await otplibTotp.matchStep(RFC_SECRET, await codeOf(step - 1), first);
    const next = await otplibTotp.matchStep(RFC_SECRET, await codeOf(step + 1), last);
    const tooOld = await otplibTotp.matchStep(RFC_SECRET, await codeOf(step - 2), first);

    expect(previous).toBe(step - 1);
    expect(next).toBe(step + 1);
    expect(tooOld).toBeUndefined();
  });

  it('refuses a code of another secret', async () => {
    const other = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const code = await codeOf(step, other);
    const window = await Promise.all([-1, 0, 1].map((near) => codeOf(step + near)));

    const matched = await otplibTotp.matchStep(RFC_SECRET, code, at);

    expect(window).not.toContain(code);
    expect(matched).toBeUndefined();
    expect(await otplibTotp.matchStep(other, code, at)).toBe(step);
  });

  it.each([
    ['five digits', (code: string) => code.slice(1)],
    ['seven digits', (code: string) => `${code}0`],
    ['a space inside', (code: string) => `${code.slice(0, 3)} ${code.slice(3)}`],
    ['surrounding spaces', (code: string) => ` ${code} `],
    ['letters', () => 'abcdef'],
    [
      'full-width digits',
      (code: string) => code.replace(/\d/g, (digit) => String.fromCharCode(0xff10 + Number(digit))),
    ],
    ['nothing', () => ''],
  ])('answers undefined, without throwing, for a code with %s', async (_name, mangle) => {
    const valid = await codeOf(step);

    const matched = otplibTotp.matchStep(RFC_SECRET, mangle(valid), at);

    await expect(matched).resolves.toBeUndefined();
  });

  it.each([
    ['a secret that is not base32', '!!!!not-base32!!!!'],
    ['a secret too short', 'JBSWY3DPEHPK3PXP'],
    ['an empty secret', ''],
  ])('answers undefined, without throwing, for %s', async (_name, secret) => {
    const matched = otplibTotp.matchStep(secret, '123456', at);

    await expect(matched).resolves.toBeUndefined();
  });

  it('answers undefined, without throwing, for an invalid date', async () => {
    const matched = otplibTotp.matchStep(RFC_SECRET, await codeOf(step), new Date(Number.NaN));

    await expect(matched).resolves.toBeUndefined();
  });
});

describe('otplibTotp.generateSecret', () => {
  it('makes distinct base32 secrets of 20 random bytes that codes can be made from', async () => {
    const secrets = Array.from({ length: 50 }, () => otplibTotp.generateSecret());

    const matched = await otplibTotp.matchStep(secrets[0]!, await codeOf(step, secrets[0]), at);

    for (const secret of secrets) expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(new Set(secrets).size).toBe(secrets.length);
    expect(matched).toBe(step);
  });
});

describe('otplibTotp.otpauthUrl', () => {
  it('names the issuer and account the way authenticator apps read them', () => {
    const url = otplibTotp.otpauthUrl(RFC_SECRET, 'alice@example.com', 'Acme Deployer');

    expect(url).toBe(`otpauth://totp/Acme%20Deployer:alice%40example.com?secret=${RFC_SECRET}&issuer=Acme%20Deployer`);
  });
});
