import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newApiKey, randomTokens } from '../../../../infra/crypto/tokens.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('randomTokens.random', () => {
  it('makes URL-safe tokens of 32 random bytes by default', () => {
    const token = randomTokens.random();

    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
  });

  it.each([16, 24, 48])('makes tokens of %i random bytes when asked', (bytes) => {
    const token = randomTokens.random(bytes);

    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(bytes);
  });

  it('never repeats over 1000 tokens', () => {
    const tokens = Array.from({ length: 1000 }, () => randomTokens.random());

    expect(new Set(tokens).size).toBe(1000);
  });
});

describe('randomTokens.hash', () => {
  it('is the hex SHA-256 of the token, the same every time', () => {
    const token = randomTokens.random();

    const hashes = [randomTokens.hash(token), randomTokens.hash(token)];

    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes[1]).toBe(hashes[0]);
    expect(hashes[0]).toBe(createHash('sha256').update(token).digest('hex'));
  });

  it('matches a known SHA-256 and tells tokens apart', () => {
    const known = randomTokens.hash('abc');
    const other = randomTokens.hash('abd');

    expect(known).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(other).not.toBe(known);
  });
});

describe('newApiKey', () => {
  it('is dpl_ and 40 base62 characters, shown by its first 12 characters', () => {
    const { fullKey, prefix } = newApiKey();

    expect(fullKey).toMatch(/^dpl_[0-9A-Za-z]{40}$/);
    expect(prefix).toHaveLength(12);
    expect(prefix).toBe(fullKey.slice(0, 12));
    expect(prefix.startsWith('dpl_')).toBe(true);
  });

  it('never repeats over 1000 keys', () => {
    const keys = Array.from({ length: 1000 }, () => newApiKey().fullKey);

    expect(new Set(keys).size).toBe(1000);
  });

  it('uses every base62 character about equally often (no modulo bias)', () => {
    // Prepare: 2000 keys are 80,000 characters, about 1290 of each; with `byte % 62` over all 256 byte values the
    // first eight characters would come 25% more often than the others (over 9 standard deviations).
    const counts = new Map<string, number>();

    // Act
    for (let i = 0; i < 2000; i++) {
      for (const char of newApiKey().fullKey.slice(4)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }

    // Assess
    const expected = (2000 * 40) / 62;
    expect([...counts.keys()].sort()).toEqual([...BASE62].sort());
    for (const char of BASE62) {
      expect(Math.abs((counts.get(char) ?? 0) - expected) / expected, `character ${char}`).toBeLessThan(0.15);
    }
  });
});
