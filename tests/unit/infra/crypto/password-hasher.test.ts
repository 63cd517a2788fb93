import { parseOptions, verify as argon2Verify } from '@node-rs/argon2';
import { describe, expect, it } from 'vitest';
import { argon2PasswordHasher, argon2idOptions, burnTimeHash } from '../../../../infra/crypto/password-hasher.js';

describe('argon2PasswordHasher', () => {
  it('verifies the password a hash was made from', async () => {
    // Prepare
    const stored = await argon2PasswordHasher.hash('correct horse battery staple');

    // Act
    const verified = await argon2PasswordHasher.verify(stored, 'correct horse battery staple');

    // Assess
    expect(verified).toBe(true);
  });

  it('rejects a wrong password', async () => {
    const stored = await argon2PasswordHasher.hash('correct horse battery staple');

    const verified = await argon2PasswordHasher.verify(stored, 'correct horse battery stapler');

    expect(verified).toBe(false);
  });

  it('makes Argon2id hashes with the OWASP parameters and a fresh salt each time', async () => {
    const first = await argon2PasswordHasher.hash('same password');
    const second = await argon2PasswordHasher.hash('same password');

    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(parseOptions(first)).toMatchObject({ memoryCost: 19456, timeCost: 2, parallelism: 1, saltLen: 16 });
    expect(second).not.toBe(first);
  });

  it.each([
    ['an empty string', ''],
    ['plain text', 'not a hash'],
    ['a truncated Argon2id hash', '$argon2id$v=19$m=19456,t=2,p=1$I8eNenZMkWk3vosZmBfq1w$'],
    ['a bcrypt hash', '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW'],
  ])('answers false, without throwing, for a malformed hash: %s', async (_name, malformed) => {
    const verified = argon2PasswordHasher.verify(malformed, 'any password');

    await expect(verified).resolves.toBe(false);
  });

  it('burns time against a dummy hash made with the current parameters', async () => {
    const dummy = parseOptions(burnTimeHash);

    expect(dummy).toMatchObject({
      algorithm: argon2idOptions.algorithm,
      memoryCost: argon2idOptions.memoryCost,
      timeCost: argon2idOptions.timeCost,
      parallelism: argon2idOptions.parallelism,
    });
    await expect(argon2PasswordHasher.burnTime('whatever was typed')).resolves.toBeUndefined();
  });

  it('burnTime verifies against a well-formed hash, so it costs a real verification (not a quick parse failure)', async () => {
    // A malformed hash makes argon2 reject at once; a well-formed one runs the whole verification and answers false.
    // (How long that takes is a benchmark's business, not a unit test's: timing assertions fail on a busy machine.)
    await expect(argon2Verify(burnTimeHash, 'wrong password')).resolves.toBe(false);
    await expect(argon2Verify('$argon2id$v=19$m=19456,t=2,p=1$bad', 'wrong password')).rejects.toThrow();
  });
});
