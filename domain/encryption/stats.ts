// GET /api/v1/admin/encryption/stats: how many encrypted values each record type holds and under which key id, how
// many are under a retired key (in the ring but not active, or not in the ring at all), and the active key id.
// Computed from the encryption index alone (one scan of the sparse index: its cost grows with the number of
// encrypted items, not with the table); nothing is read from the items and nothing is decrypted.
import { RECORD_TYPES, type RecordType } from './fields.js';
import type { EncryptionDeps, IndexEntry, KeyringInfo } from './ports.js';

/** active: encrypts new values; retired: in the ring, still decrypts; not_in_keyring: nothing here decrypts it. */
export type KeyStatus = 'active' | 'retired' | 'not_in_keyring';

export interface KeyCount {
  readonly key_id: string;
  readonly status: KeyStatus;
  readonly records: number;
  readonly values: number;
}

export interface TableStats {
  readonly record_type: RecordType;
  /** Items holding at least one ciphertext, and the ciphertexts they hold. */
  readonly records: number;
  readonly values: number;
  /** Items with at least one value under a key other than the active one, and those values. */
  readonly retired_records: number;
  readonly retired_values: number;
  readonly keys: readonly KeyCount[];
}

export interface EncryptionStats {
  readonly active_key_id: string;
  readonly tables: readonly TableStats[];
  readonly keys: readonly KeyCount[];
  readonly total: Omit<TableStats, 'record_type' | 'keys'>;
  /** Key ids of the ring that no value needs any more: they may be removed from the ring. */
  readonly removable_key_ids: readonly string[];
  readonly computed_at: string;
}

const statusOf = (ring: KeyringInfo, keyId: string): KeyStatus =>
  keyId === ring.activeKeyId ? 'active' : ring.keyIds.includes(keyId) ? 'retired' : 'not_in_keyring';

const byKeyId = (a: { key_id: string }, b: { key_id: string }) => (a.key_id < b.key_id ? -1 : 1);

/** The stats of these index entries under this ring (pure: the use case below feeds it). */
export const summarize = (entries: readonly IndexEntry[], ring: KeyringInfo, at: Date): EncryptionStats => {
  type Counts = { records: number; values: number; retiredRecords: number; retiredValues: number };
  type KeyCounts = Map<string, { records: number; values: number }>;
  const blank = (): Counts => ({ records: 0, values: 0, retiredRecords: 0, retiredValues: 0 });
  const tables = new Map<RecordType, { counts: Counts; keys: KeyCounts }>(
    RECORD_TYPES.map((type) => [type, { counts: blank(), keys: new Map() }]),
  );
  const allKeys: KeyCounts = new Map(ring.keyIds.map((id) => [id, { records: 0, values: 0 }]));
  const total = blank();
  for (const entry of entries) {
    const table = tables.get(entry.recordType);
    if (table === undefined) continue;
    const values = Object.entries(entry.values).filter(([, n]) => n > 0);
    const retired = values.filter(([id]) => id !== ring.activeKeyId).reduce((sum, [, n]) => sum + n, 0);
    const count = values.reduce((sum, [, n]) => sum + n, 0);
    for (const counts of [table.counts, total]) {
      counts.records += 1;
      counts.values += count;
      counts.retiredRecords += retired > 0 ? 1 : 0;
      counts.retiredValues += retired;
    }
    for (const [id, n] of values)
      for (const keys of [table.keys, allKeys]) {
        const key = keys.get(id) ?? { records: 0, values: 0 };
        keys.set(id, { records: key.records + 1, values: key.values + n });
      }
  }
  const keyList = (keys: KeyCounts): KeyCount[] =>
    [...keys].map(([id, c]) => ({ key_id: id, status: statusOf(ring, id), ...c })).sort(byKeyId);
  const shape = (c: Counts) => ({
    records: c.records,
    values: c.values,
    retired_records: c.retiredRecords,
    retired_values: c.retiredValues,
  });
  const keys = keyList(allKeys);
  return {
    active_key_id: ring.activeKeyId,
    tables: [...tables].map(([type, t]) => ({ record_type: type, ...shape(t.counts), keys: keyList(t.keys) })),
    keys,
    total: shape(total),
    removable_key_ids: keys.filter((k) => k.status === 'retired' && k.values === 0).map((k) => k.key_id),
    computed_at: at.toISOString(),
  };
};

export const encryptionStats = async (deps: Pick<EncryptionDeps, 'index' | 'keyring' | 'clock'>) => {
  const ring = await deps.keyring();
  const entries: IndexEntry[] = [];
  for await (const page of deps.index.entries()) entries.push(...page);
  return summarize(entries, ring, deps.clock.now());
};
