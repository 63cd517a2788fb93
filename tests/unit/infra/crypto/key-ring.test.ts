// The ring as configuration text (a new key added decrypt-only, made active, removed; the next key id) and the key
// file followed as it changes (looked at no more than once a second; a file that does not parse keeps the last ring).
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KeyRingCipher, keyRingSource } from '../../../../infra/crypto/key-ring-source.js';
import {
  newKeyEntry,
  nextKeyId,
  ringKeyIds,
  withKeyActive,
  withKeyAdded,
  withKeyRemoved,
} from '../../../../infra/crypto/key-ring-text.js';

const k = (id: string, fill: number) => `${id}:${Buffer.alloc(32, fill).toString('base64')}`;

describe('key ring text', () => {
  it('adds a key after the active one, makes it active, and removes the old one', () => {
    // Prepare
    const ring = k('local-1', 1);

    // Act
    const added = withKeyAdded(ring, k('local-2', 2));
    const active = withKeyActive(added, 'local-2');
    const removed = withKeyRemoved(active, 'local-1');

    // Assess
    expect(ringKeyIds(added)).toEqual({ activeKeyId: 'local-1', keyIds: ['local-1', 'local-2'] });
    expect(ringKeyIds(active)).toEqual({ activeKeyId: 'local-2', keyIds: ['local-2', 'local-1'] });
    expect(removed).toBe(k('local-2', 2));
  });

  it('refuses to remove the active key or an unknown one, and to add a key id twice', () => {
    // Prepare
    const ring = `${k('a', 1)},${k('b', 2)}`;

    // Act / Assess
    expect(() => withKeyRemoved(ring, 'a')).toThrow('"a" is the active key');
    expect(() => withKeyRemoved(ring, 'c')).toThrow('"c" is not in the key ring');
    expect(() => withKeyActive(ring, 'c')).toThrow('"c" is not in the key ring');
    expect(() => withKeyAdded(ring, k('b', 3))).toThrow('appears twice');
  });

  it.each([
    ['local-1', 'local-2'],
    ['k9', 'k10'],
    ['prod', 'prod-2'],
  ])('names the key after %s %s', (active, expected) => {
    expect(nextKeyId(k(active, 1))).toBe(expected);
  });

  it('skips ids already in the ring', () => {
    expect(nextKeyId(`${k('local-1', 1)},${k('local-2', 2)}`)).toBe('local-3');
  });

  it('makes new entries of 32 random bytes in the ring format', () => {
    // Act
    const [a, b] = [newKeyEntry('x'), newKeyEntry('x')];

    // Assess
    expect(ringKeyIds(a).keyIds).toEqual(['x']);
    expect(Buffer.from(a.split(':')[1]!, 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe('keyRingSource', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  const writeRing = async (file: string, text: string) => {
    await writeFile(`${file}.tmp`, JSON.stringify({ encryptionKeys: text }));
    await rename(`${file}.tmp`, file);
  };

  it('follows the key file, looking at it no more than once per interval, and keeps the last good ring', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'key-ring-'));
    const file = join(dir, 'secrets.json');
    await writeRing(file, k('a', 1));
    let now = 0;
    const source = keyRingSource(file, () => 'fixed', { checkEveryMs: 1000, now: () => now });

    // Act
    const first = source();
    await writeRing(file, `${k('a', 1)},${k('b', 2)}`);
    now = 500;
    const soon = source();
    now = 1000;
    const later = source();
    await writeFile(file, '{"encryptionKeys": "not a ring"}');
    now = 2000;
    const broken = source();

    // Assess
    expect(first).toBe(k('a', 1));
    expect(soon).toBe(k('a', 1));
    expect(later).toBe(`${k('a', 1)},${k('b', 2)}`);
    expect(broken).toBe(later);
  });

  it('is the fixed ring when no file is named (the cloud)', () => {
    expect(keyRingSource(undefined, () => k('c', 3))()).toBe(k('c', 3));
  });

  it('gives a cipher that encrypts with the active key of the ring as it is now, and decrypts with any', async () => {
    // Prepare
    let text = k('a', 1);
    const cipher = new KeyRingCipher(() => text);
    const before = cipher.encrypt('s', 'ctx');

    // Act
    text = `${k('b', 2)},${k('a', 1)}`;
    const after = cipher.encrypt('s', 'ctx');

    // Assess
    expect(before.split('.')[1]).toBe('a');
    expect(after.split('.')[1]).toBe('b');
    expect([cipher.decrypt(before, 'ctx'), cipher.decrypt(after, 'ctx')]).toEqual(['s', 's']);
  });
});
