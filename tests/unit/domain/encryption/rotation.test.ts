// Key rotation: the next step from the durable state (a table), and the re-encryption passes over the index (values
// under other keys re-encrypted with the ring, a concurrent write left alone and taken again by the next pass,
// undecryptable values counted and left, a pass that stops early on its budget).
import { describe, expect, it } from 'vitest';
import {
  decideRotation,
  reencryptAll,
  reencryptPass,
  type RotationState,
} from '../../../../domain/encryption/rotation.js';
import { backfillIndex } from '../../../../domain/encryption/backfill.js';
import { keyIdOf } from '../../../../domain/encryption/fields.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeEncryptionBackfill, FakeEncryptionIndex } from '../../../fakes/encryption.js';

const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const K9 = Buffer.alloc(32, 9);
const old = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: { k1: K1 } });
const ring = new AesGcmSecretCipher({ activeKeyId: 'k2', keys: { k2: K2, k1: K1 } });
const lost = new AesGcmSecretCipher({ activeKeyId: 'k9', keys: { k9: K9 } });
const NOW = new Date('2026-03-01T00:00:10.000Z');

describe('decideRotation', () => {
  const adding: RotationState = { phase: 'adding', keyId: 'k2', since: '2026-03-01T00:00:08.000Z' };
  const reencrypting: RotationState = { phase: 'reencrypting', keyId: 'k2', since: '2026-03-01T00:00:05.000Z' };
  const cases: [string, RotationState | undefined, { activeKeyId: string; keyIds: string[] }, unknown][] = [
    ['no rotation: add a key', undefined, { activeKeyId: 'k1', keyIds: ['k1'] }, { kind: 'add-key' }],
    [
      'added 2 s ago: wait for the readers',
      adding,
      { activeKeyId: 'k1', keyIds: ['k1', 'k2'] },
      { kind: 'wait', ms: 1000, reason: 'readers' },
    ],
    [
      'added long enough ago: activate',
      { ...adding, since: '2026-03-01T00:00:07.000Z' },
      { activeKeyId: 'k1', keyIds: ['k1', 'k2'] },
      { kind: 'activate', keyId: 'k2' },
    ],
    [
      'active for 5 s: re-encrypt',
      reencrypting,
      { activeKeyId: 'k2', keyIds: ['k2', 'k1'] },
      { kind: 'reencrypt', keyId: 'k2' },
    ],
    [
      'active for 1 s: wait for the writers',
      { ...reencrypting, since: '2026-03-01T00:00:09.000Z' },
      { activeKeyId: 'k2', keyIds: ['k2', 'k1'] },
      { kind: 'wait', ms: 2000, reason: 'writers' },
    ],
    [
      "the rotation's key left the ring",
      reencrypting,
      { activeKeyId: 'k1', keyIds: ['k1'] },
      { kind: 'broken', reason: 'the rotation\'s key "k2" is not in the key ring' },
    ],
    [
      'active before its time (edited by hand)',
      adding,
      { activeKeyId: 'k2', keyIds: ['k2', 'k1'] },
      { kind: 'broken', reason: '"k2" is already active' },
    ],
    [
      're-encrypting but another key is active',
      reencrypting,
      { activeKeyId: 'k1', keyIds: ['k1', 'k2'] },
      { kind: 'broken', reason: 'the rotation\'s key "k2" is not the active one' },
    ],
  ];
  it.each(cases)('%s', (_name, state, keyRing, expected) => {
    // Act
    const step = decideRotation(state, keyRing, NOW, 3000);

    // Assess
    expect(step).toEqual(expected);
  });
});

const userItem = (id: string, cipher: AesGcmSecretCipher) => ({
  pk: `USER#${id}`,
  sk: 'PROFILE',
  type: 'user',
  id,
  twoFactor: { secret: cipher.encrypt(`S-${id}`, `totp:${id}`) },
});
const secretOf = (index: FakeEncryptionIndex, id: string) =>
  (index.items.get(`USER#${id}\nPROFILE`)!['twoFactor'] as { secret: string }).secret;

describe('reencryptPass / reencryptAll', () => {
  it('re-encrypts every value under other keys with the active key, leaving values already under it', async () => {
    // Prepare
    const index = new FakeEncryptionIndex(3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) index.put(userItem(id, old));
    index.put(userItem('f', ring));
    const current = secretOf(index, 'f');
    const progress: number[] = [];

    // Act
    const report = await reencryptPass(
      { index, cipher: ring, activeKeyId: 'k2', clock: new FakeClock() },
      { concurrency: 2, batchSize: 2, onProgress: (p) => progress.push(p.done) },
    );

    // Assess
    expect(report).toEqual({
      found: 5,
      rewritten: 5,
      values: 5,
      conflicts: 0,
      current: 0,
      undecryptable: 0,
      stopped: false,
    });
    expect(progress).toEqual([2, 4, 5]);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      expect(keyIdOf(secretOf(index, id))).toBe('k2');
      expect(ring.decrypt(secretOf(index, id), `totp:${id}`)).toBe(`S-${id}`);
    }
    expect(secretOf(index, 'f')).toBe(current);
  });

  it('leaves an item written since it was read, and the next pass takes it again', async () => {
    // Prepare
    const index = new FakeEncryptionIndex();
    index.put(userItem('a', old));
    index.put(userItem('b', old));
    let raced = false;
    index.beforeReplace = (record) => {
      if (raced || record.key.pk !== 'USER#a') return;
      raced = true;
      index.put(userItem('a', old)); // another process writes the user back under the old key
    };

    // Act
    const report = await reencryptAll(
      { index, cipher: ring, activeKeyId: 'k2', clock: new FakeClock() },
      { concurrency: 1 },
    );

    // Assess
    expect(report).toEqual({ passes: 3, rewritten: 2, values: 2, conflicts: 1, undecryptable: 0, complete: true });
    expect(keyIdOf(secretOf(index, 'a'))).toBe('k2');
    expect(ring.decrypt(secretOf(index, 'a'), 'totp:a')).toBe('S-a');
  });

  it('counts values no key of the ring decrypts, leaves them, and still ends', async () => {
    // Prepare
    const index = new FakeEncryptionIndex();
    index.put(userItem('a', lost));
    index.put(userItem('b', old));

    // Act
    const report = await reencryptAll(
      { index, cipher: ring, activeKeyId: 'k2', clock: new FakeClock() },
      { concurrency: 4 },
    );

    // Assess
    expect(report).toMatchObject({ rewritten: 1, undecryptable: 1, complete: true, passes: 2 });
    expect(keyIdOf(secretOf(index, 'a'))).toBe('k9');
  });

  it('stops between batches when asked (a time budget), reporting it incomplete', async () => {
    // Prepare
    const index = new FakeEncryptionIndex();
    for (const id of ['a', 'b', 'c', 'd']) index.put(userItem(id, old));
    let batches = 0;

    // Act
    const report = await reencryptAll(
      { index, cipher: ring, activeKeyId: 'k2', clock: new FakeClock() },
      { concurrency: 1, batchSize: 2, shouldStop: () => batches++ >= 1 },
    );

    // Assess
    expect(report).toMatchObject({ rewritten: 2, complete: false, passes: 1 });
    expect(['a', 'b', 'c', 'd'].map((id) => keyIdOf(secretOf(index, id))).sort()).toEqual(['k1', 'k1', 'k2', 'k2']);
  });
});

describe('backfillIndex', () => {
  it('adds an entry for each item of a registered type holding ciphertexts, and a second run finds none', async () => {
    // Prepare
    const backfill = new FakeEncryptionBackfill();
    backfill.items.push(userItem('a', old), userItem('b', old));
    backfill.items.push({ pk: 'USER#c', sk: 'PROFILE', type: 'user', id: 'c', twoFactor: { secret: null } });
    backfill.items.push({ pk: 'TARGET#t', sk: 'TARGET', type: 'target' });

    // Act
    const first = await backfillIndex(backfill, { concurrency: 2 });
    const second = await backfillIndex(backfill, { concurrency: 2 });

    // Assess
    expect(first).toEqual({ scanned: 4, found: 2, indexed: 2, skipped: 0, next: undefined });
    expect([...backfill.indexed].sort()).toEqual(['USER#a\nPROFILE', 'USER#b\nPROFILE']);
    expect(second).toEqual({ scanned: 4, found: 0, indexed: 0, skipped: 0, next: undefined });
  });
});
