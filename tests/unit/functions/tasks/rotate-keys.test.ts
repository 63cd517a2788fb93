// The rotateKeys function: re-encrypts until nothing is left and says so, stops on its time budget saying what is
// left (invoked again, it goes on), backfills page by page, and refuses a payload it does not know.
import { describe, expect, it } from 'vitest';
import { makeHandler } from '../../../../functions/tasks/rotate-keys.js';
import type { RotationDeps } from '../../../../functions/shared/rotation-wiring.js';
import { keyIdOf } from '../../../../domain/encryption/fields.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeEncryptionBackfill, FakeEncryptionIndex } from '../../../fakes/encryption.js';

const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const old = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: { k1: K1 } });
const ring = new AesGcmSecretCipher({ activeKeyId: 'k2', keys: { k2: K2, k1: K1 } });

const setup = (count: number) => {
  const index = new FakeEncryptionIndex(10);
  for (let i = 0; i < count; i += 1)
    index.put({
      pk: `USER#${i}`,
      sk: 'PROFILE',
      type: 'user',
      id: String(i),
      twoFactor: { secret: old.encrypt('S', `totp:${i}`) },
    });
  const backfill = new FakeEncryptionBackfill();
  const deps: RotationDeps = {
    index,
    backfill,
    ring: () => ({ activeKeyId: 'k2', keyIds: ['k2', 'k1'], cipher: ring }),
    clock: new FakeClock(),
  };
  return { index, backfill, handler: makeHandler(() => deps) };
};

describe('rotateKeys', () => {
  it('re-encrypts everything and answers that nothing is left, and the old key removable', async () => {
    // Prepare
    const { index, handler } = setup(150);

    // Act
    const answer = await handler({}, { getRemainingTimeInMillis: () => 900_000 });

    // Assess
    expect(answer).toMatchObject({ action: 'reencrypt', complete: true, rewritten: 150, left_values: 0 });
    expect(answer).toMatchObject({ active_key_id: 'k2', removable_key_ids: ['k1'] });
    expect(
      [...index.items.values()].every((item) => keyIdOf((item['twoFactor'] as { secret: string }).secret) === 'k2'),
    ).toBe(true);
  });

  it('stops when its time is nearly spent, answering what is left; invoked again it finishes', async () => {
    // Prepare
    const { handler } = setup(250);
    let calls = 0;
    const short = { getRemainingTimeInMillis: () => (calls++ < 1 ? 900_000 : 30_000) };

    // Act
    const first = await handler({}, short);
    const second = await handler({}, { getRemainingTimeInMillis: () => 900_000 });

    // Assess
    expect(first).toMatchObject({ complete: false, rewritten: 100, left_values: 150, left_records: 150 });
    expect(second).toMatchObject({ complete: true, rewritten: 150, left_values: 0 });
  });

  it('backfills, answering complete with no cursor to go on from', async () => {
    // Prepare
    const { backfill, handler } = setup(0);
    backfill.items.push({
      pk: 'USER#x',
      sk: 'PROFILE',
      type: 'user',
      id: 'x',
      twoFactor: { secret: old.encrypt('S', 'totp:x') },
    });

    // Act
    const answer = await handler({ action: 'backfill' }, { getRemainingTimeInMillis: () => 900_000 });

    // Assess
    expect(answer).toMatchObject({ action: 'backfill', indexed: 1, complete: true, next: null });
  });

  it('refuses a payload it does not know', async () => {
    // Prepare
    const { handler } = setup(0);

    // Act / Assess
    await expect(handler({ action: 'drop-keys' }, { getRemainingTimeInMillis: () => 900_000 })).rejects.toThrow();
    await expect(handler({ retire: 'k1' }, { getRemainingTimeInMillis: () => 900_000 })).rejects.toThrow();
  });
});
