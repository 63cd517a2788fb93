// POST /api/v1/admin/encryption/verify: whether a key (`<key id>:<base64 of 32 bytes>`, checked by the endpoint)
// decrypts every value stored under its key id, using that key alone. Answers counts per record type, never data.
//
// One attempt per hour per caller (the user behind a token or an API key): the slot is taken with a conditional
// write before anything is read, so concurrent attempts cannot both pass; a malformed key is refused by the endpoint
// before this runs and does not count. A wrong key is a counted attempt like a right one.
//
// The key ring seals every tenant's values: a tenant-scoped caller cannot test a key against them (403 FORBIDDEN,
// tenant_restriction, before the slot is taken), whatever its roles or scopes.
import { AuthRateLimitError, ForbiddenError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import { encryptedValues, RECORD_TYPES, type RecordType } from './fields.js';
import type { EncryptionDeps, IndexEntry, SingleKeyDecrypter } from './ports.js';

export const VERIFY_WINDOW_SECONDS = 3600;

/** Items read at once (one BatchGetItem holds at most 100 keys). */
const BATCH = 100;

export interface TableVerification {
  readonly record_type: RecordType;
  readonly checked: number;
  readonly ok: number;
  readonly failed: number;
}

export interface KeyVerification {
  readonly key_id: string;
  /** ok: every value under the key id decrypts with the key; failed: some do not; nothing_to_verify: none exist. */
  readonly result: 'ok' | 'failed' | 'nothing_to_verify';
  readonly decrypts_all: boolean;
  readonly in_keyring: boolean;
  readonly checked: number;
  readonly ok: number;
  readonly failed: number;
  readonly tables: readonly TableVerification[];
  readonly verified_at: string;
}

export const verifyKey = async (
  deps: EncryptionDeps,
  caller: Caller,
  key: SingleKeyDecrypter,
): Promise<KeyVerification> => {
  if (caller.tenantId !== null)
    throw new ForbiddenError('The encryption keys are shared by every tenant: only a global admin can verify one.', {
      reason: 'tenant_restriction',
    });
  const now = deps.clock.now();
  const slot = await deps.slots.take(caller.userId, now, new Date(now.getTime() + VERIFY_WINDOW_SECONDS * 1000));
  if ('takenUntil' in slot)
    throw new AuthRateLimitError(
      Math.max(1, Math.ceil((slot.takenUntil.getTime() - now.getTime()) / 1000)),
      'too_many_key_verifications',
    );
  const counts = new Map<RecordType, { checked: number; ok: number }>(
    RECORD_TYPES.map((type) => [type, { checked: 0, ok: 0 }]),
  );
  let batch: IndexEntry[] = [];
  const check = async () => {
    for (const record of await deps.index.records(batch)) {
      const table = counts.get(record.recordType)!;
      for (const value of encryptedValues(record.recordType, record.item)) {
        if (value.keyId !== key.keyId) continue;
        table.checked += 1;
        if (key.decrypts(value.ciphertext, value.context)) table.ok += 1;
      }
    }
    batch = [];
  };
  for await (const page of deps.index.entries()) {
    for (const entry of page) {
      if ((entry.values[key.keyId] ?? 0) === 0) continue;
      batch.push(entry);
      if (batch.length === BATCH) await check();
    }
  }
  if (batch.length > 0) await check();
  const tables = [...counts].map(([type, c]) => ({ record_type: type, ...c, failed: c.checked - c.ok }));
  const checked = tables.reduce((sum, t) => sum + t.checked, 0);
  const ok = tables.reduce((sum, t) => sum + t.ok, 0);
  const ring = await deps.keyring();
  return {
    key_id: key.keyId,
    result: checked === 0 ? 'nothing_to_verify' : ok === checked ? 'ok' : 'failed',
    decrypts_all: checked > 0 && ok === checked,
    in_keyring: ring.keyIds.includes(key.keyId),
    checked,
    ok,
    failed: checked - ok,
    tables,
    verified_at: deps.clock.now().toISOString(),
  };
};
