import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AesGcmSecretCipher, parseKeyring, SecretCipherError } from '../../../../infra/crypto/secret-cipher.js';

const key = (fill: number) => Buffer.alloc(32, fill);
const cipherWith = (activeKeyId: string, keys: Record<string, Buffer>) => new AesGcmSecretCipher({ activeKeyId, keys });

/** The ciphertext with one base64url part (2 iv, 3 body, 4 tag) changed in its first byte. */
const flipFirstByte = (ciphertext: string, part: number): string => {
  const parts = ciphertext.split('.');
  const bytes = Buffer.from(parts[part]!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
};

describe('AesGcmSecretCipher', () => {
  it('decrypts what it encrypted, in the v1 format with a fresh 12-byte iv each time', () => {
    // Prepare
    const cipher = cipherWith('k1', { k1: key(1) });

    // Act
    const first = cipher.encrypt('JBSWY3DPEHPK3PXP', 'totp:user-1');
    const second = cipher.encrypt('JBSWY3DPEHPK3PXP', 'totp:user-1');

    // Assess
    expect(cipher.decrypt(first, 'totp:user-1')).toBe('JBSWY3DPEHPK3PXP');
    expect(first).toMatch(/^v1\.k1\.[\w-]{16}\.[\w-]+\.[\w-]{22}$/);
    expect(first).not.toContain('JBSWY3DPEHPK3PXP');
    expect(second).not.toBe(first);
  });

  it('round-trips empty and non-ASCII plaintexts', () => {
    const cipher = cipherWith('k1', { k1: key(1) });

    const texts = ['', 'clé secrète 🔑'].map((text) => cipher.decrypt(cipher.encrypt(text, 'ctx'), 'ctx'));

    expect(texts).toEqual(['', 'clé secrète 🔑']);
  });

  it.each([
    ['iv', 2],
    ['ciphertext', 3],
    ['tag', 4],
  ])('refuses a tampered %s', (_name, part) => {
    const cipher = cipherWith('k1', { k1: key(1) });
    const tampered = flipFirstByte(cipher.encrypt('secret', 'totp:user-1'), part);

    expect(() => cipher.decrypt(tampered, 'totp:user-1')).toThrow(SecretCipherError);
  });

  it('refuses a truncated tag', () => {
    const cipher = cipherWith('k1', { k1: key(1) });
    const parts = cipher.encrypt('secret', 'ctx').split('.');
    const truncated = [
      ...parts.slice(0, 4),
      Buffer.from(parts[4]!, 'base64url').subarray(0, 4).toString('base64url'),
    ].join('.');

    expect(() => cipher.decrypt(truncated, 'ctx')).toThrow(SecretCipherError);
  });

  it('refuses a ciphertext copied onto another context', () => {
    const cipher = cipherWith('k1', { k1: key(1) });
    const ciphertext = cipher.encrypt('secret', 'totp:user-1');

    expect(() => cipher.decrypt(ciphertext, 'totp:user-2')).toThrow(SecretCipherError);
  });

  it('refuses a ciphertext naming a key it does not hold', () => {
    const other = cipherWith('k9', { k9: key(9) });
    const cipher = cipherWith('k1', { k1: key(1) });
    const ciphertext = other.encrypt('secret', 'ctx');

    expect(() => cipher.decrypt(ciphertext, 'ctx')).toThrow(SecretCipherError);
  });

  it('refuses a ciphertext relabelled with another key id it holds', () => {
    const cipher = cipherWith('k1', { k1: key(1), k2: key(2) });
    const relabelled = cipher.encrypt('secret', 'ctx').replace(/^v1\.k1\./, 'v1.k2.');

    expect(() => cipher.decrypt(relabelled, 'ctx')).toThrow(SecretCipherError);
  });

  it.each([
    '',
    'secret',
    'v1.k1',
    'v2.k1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA',
    'v1.k1.AAAAAAAAAAAAAAAA.AA.AAAAAAAAAAAAAAAAAAAAAA.x',
    'v1.k1.!!!.AA.AAAAAAAAAAAAAAAAAAAAAA',
  ])('refuses the malformed ciphertext %j', (malformed) => {
    const cipher = cipherWith('k1', { k1: key(1) });

    expect(() => cipher.decrypt(malformed, 'ctx')).toThrow(SecretCipherError);
  });

  it('says nothing about the key or the plaintext when it refuses', () => {
    const secretKey = randomBytes(32);
    const cipher = cipherWith('k1', { k1: secretKey });
    const ciphertext = cipher.encrypt('the plaintext', 'ctx');

    let error: unknown;
    try {
      cipher.decrypt(ciphertext, 'other');
    } catch (caught) {
      error = caught;
    }

    expect(error).toBeInstanceOf(SecretCipherError);
    const told = `${(error as Error).message} ${(error as Error).stack}`;
    expect(told).not.toContain('the plaintext');
    expect(told).not.toContain(secretKey.toString('base64'));
    expect(told).not.toContain(secretKey.toString('hex'));
  });

  it('keeps decrypting with a retired key after rotation, and encrypts with the active one', () => {
    // Prepare
    const before = cipherWith('k1', { k1: key(1) });
    const old = before.encrypt('old secret', 'ctx');
    const after = cipherWith('k2', { k2: key(2), k1: key(1) });

    // Act
    const fresh = after.encrypt('new secret', 'ctx');

    // Assess
    expect(after.decrypt(old, 'ctx')).toBe('old secret');
    expect(fresh.startsWith('v1.k2.')).toBe(true);
    expect(after.decrypt(fresh, 'ctx')).toBe('new secret');
    expect(() => before.decrypt(fresh, 'ctx')).toThrow(SecretCipherError);
  });

  it.each([
    [
      'an active key that is not in the keyring',
      'k2',
      { k1: key(1) },
      'The active secret key "k2" is not in the keyring',
    ],
    ['a key that is not 32 bytes', 'k1', { k1: Buffer.alloc(16) }, 'Secret key "k1" must be 32 bytes'],
    ['a key id with a dot', 'k.1', { 'k.1': key(1) }, 'Secret key id "k.1" must be letters, digits, "_" or "-"'],
  ])('refuses to start with %s', (_name, activeKeyId, keys, message) => {
    expect(() => cipherWith(activeKeyId, keys)).toThrow(message);
  });
});

describe('parseKeyring', () => {
  const k1 = key(1).toString('base64');
  const k2 = key(2).toString('base64');

  it('reads every key, the first one active', () => {
    const keyring = parseKeyring(`2026b:${k2}, 2026a:${k1}`);

    expect(keyring.activeKeyId).toBe('2026b');
    expect(Object.keys(keyring.keys)).toEqual(['2026b', '2026a']);
    expect(keyring.keys['2026b']?.equals(key(2))).toBe(true);
    expect(keyring.keys['2026a']?.equals(key(1))).toBe(true);
  });

  it('gives a keyring the cipher accepts', () => {
    const cipher = new AesGcmSecretCipher(parseKeyring(`k2:${k2},k1:${k1}`));
    const old = cipherWith('k1', { k1: key(1) }).encrypt('secret', 'ctx');

    expect(cipher.decrypt(old, 'ctx')).toBe('secret');
  });

  it.each([
    [
      'a key of 31 bytes',
      `k1:${k1},short:${Buffer.alloc(31, 7).toString('base64')}`,
      'Secret key "short" must be 32 bytes, base64-encoded',
      Buffer.alloc(31, 7).toString('base64'),
    ],
    [
      'a key of 33 bytes',
      `long:${Buffer.alloc(33, 7).toString('base64')}`,
      'Secret key "long" must be 32 bytes, base64-encoded',
      Buffer.alloc(33, 7).toString('base64'),
    ],
    [
      'a key that is not base64',
      `bad:${k1.slice(0, 20)}!${k1.slice(21)}`,
      'Secret key "bad" must be 32 bytes, base64-encoded',
      k1.slice(0, 20),
    ],
    ['an empty key', 'k1:', 'Secret key "k1" must be 32 bytes, base64-encoded', undefined],
    ['a repeated key id', `k1:${k1},k1:${k2}`, 'Secret key "k1" appears twice in the keyring', k2],
    ['an entry without a key id', `k1:${k1},${k2}`, 'Secret keyring entry 2 must be keyId:base64key', k2],
    ['an empty key id', `:${k1}`, 'Secret keyring entry 1 must be keyId:base64key', k1],
    ['an empty value', '', 'Secret keyring entry 1 must be keyId:base64key', undefined],
  ])('refuses %s, naming the entry but never the key', (_name, value, message, hidden) => {
    let error: Error | undefined;
    try {
      parseKeyring(value);
    } catch (caught) {
      error = caught as Error;
    }

    expect(error?.message).toContain(message);
    if (hidden !== undefined) expect(error?.message).not.toContain(hidden);
  });
});
