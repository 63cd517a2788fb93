// Verifying a key: every value under its key id decrypts with it alone (counts only), a wrong key fails them all,
// values under other keys are not touched, and one attempt per hour per caller.
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../../../domain/identity/types.js';
import { AuthRateLimitError, ForbiddenError } from '../../../../domain/identity/errors.js';
import { verifyKey } from '../../../../domain/encryption/verify.js';
import { AesGcmSecretCipher, singleKeyDecrypter } from '../../../../infra/crypto/secret-cipher.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeEncryptionIndex, FakeVerifySlots } from '../../../fakes/encryption.js';

const K1 = Buffer.alloc(32, 1);
const K2 = Buffer.alloc(32, 2);
const caller = (userId: string): Caller => ({
  kind: 'user',
  userId,
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(),
});

const setup = () => {
  const index = new FakeEncryptionIndex(2);
  const old = new AesGcmSecretCipher({ activeKeyId: 'k1', keys: { k1: K1 } });
  const current = new AesGcmSecretCipher({ activeKeyId: 'k2', keys: { k1: K1, k2: K2 } });
  for (const id of ['a', 'b', 'c'])
    index.put({
      pk: `USER#${id}`,
      sk: 'PROFILE',
      type: 'user',
      id,
      twoFactor: { secret: old.encrypt('S', `totp:${id}`) },
    });
  index.put({
    pk: 'DEPLOYMENT#d',
    sk: 'DEPLOYMENT',
    type: 'deployment',
    config: { variables: { T: `enc:${old.encrypt('t', 'deployment-variable')}` }, promptedValues: {} },
    plan: { resolvedVariables: { T: { value: `enc:${current.encrypt('t', 'deployment-variable')}`, secret: true } } },
  });
  const clock = new FakeClock(new Date('2026-03-01T00:00:00.000Z'));
  const deps = {
    index,
    keyring: async () => ({ activeKeyId: 'k2', keyIds: ['k2', 'k1'] }),
    slots: new FakeVerifySlots(),
    clock,
  };
  return { index, deps, clock };
};

describe('verifyKey', () => {
  it('decrypts every value under the key id with that key alone, and answers counts per record type', async () => {
    // Prepare
    const { deps } = setup();

    // Act
    const answer = await verifyKey(deps, caller('admin'), singleKeyDecrypter('k1', K1));

    // Assess
    expect(answer).toMatchObject({ key_id: 'k1', result: 'ok', decrypts_all: true, in_keyring: true });
    expect([answer.checked, answer.ok, answer.failed]).toEqual([4, 4, 0]);
    expect(answer.tables.filter((t) => t.checked > 0)).toEqual([
      { record_type: 'user', checked: 3, ok: 3, failed: 0 },
      { record_type: 'deployment', checked: 1, ok: 1, failed: 0 },
    ]);
    expect(JSON.stringify(answer)).not.toMatch(/v1\.|"S"/);
  });

  it('fails every value with a wrong key of the same id', async () => {
    const { deps } = setup();
    const answer = await verifyKey(deps, caller('admin'), singleKeyDecrypter('k1', Buffer.alloc(32, 9)));
    expect(answer).toMatchObject({ result: 'failed', decrypts_all: false, checked: 4, ok: 0, failed: 4 });
  });

  it('has nothing to verify for a key id no value uses', async () => {
    const { deps } = setup();
    const answer = await verifyKey(deps, caller('admin'), singleKeyDecrypter('other', K1));
    expect(answer).toMatchObject({ result: 'nothing_to_verify', decrypts_all: false, in_keyring: false, checked: 0 });
  });

  it('allows one attempt per hour per caller, telling when the next one is allowed', async () => {
    // Prepare
    const { deps, clock } = setup();
    await verifyKey(deps, caller('admin'), singleKeyDecrypter('k2', K2));
    clock.advance(59 * 60 * 1000);

    // Act
    const again = verifyKey(deps, caller('admin'), singleKeyDecrypter('k2', K2));
    const other = await verifyKey(deps, caller('other-admin'), singleKeyDecrypter('k2', K2));

    // Assess
    await expect(again).rejects.toBeInstanceOf(AuthRateLimitError);
    await expect(again).rejects.toMatchObject({
      retryAfterSeconds: 60,
      extra: { reason: 'too_many_key_verifications' },
    });
    expect(other.result).toBe('ok');
    clock.advance(60 * 1000);
    expect((await verifyKey(deps, caller('admin'), singleKeyDecrypter('k2', K2))).result).toBe('ok');
  });

  it('refuses a tenant-scoped caller before taking its hourly slot (the keys seal every tenant)', async () => {
    // Prepare
    const { deps } = setup();
    const tenantAdmin = { ...caller('tenant-admin'), tenantId: 'tenant-a' };

    // Act
    const refused = verifyKey(deps, tenantAdmin, singleKeyDecrypter('k2', K2));

    // Assess
    await expect(refused).rejects.toBeInstanceOf(ForbiddenError);
    await expect(refused).rejects.toMatchObject({ details: { reason: 'tenant_restriction' } });
    expect((await verifyKey(deps, caller('tenant-admin'), singleKeyDecrypter('k2', K2))).result).toBe('ok');
  });
});
