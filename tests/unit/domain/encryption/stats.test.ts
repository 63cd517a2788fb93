// The stats from index entries alone: counts per record type and key id, retired (in the ring, not active) and
// unknown keys (not in the ring), and which ring keys nothing needs any more.
import { describe, expect, it } from 'vitest';
import type { IndexEntry } from '../../../../domain/encryption/ports.js';
import { encryptionStats, summarize } from '../../../../domain/encryption/stats.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeEncryptionIndex } from '../../../fakes/encryption.js';

const entry = (recordType: IndexEntry['recordType'], values: Record<string, number>, id = 'x'): IndexEntry => ({
  recordType,
  key: { pk: `${recordType}#${id}`, sk: 'S' },
  values,
});
const at = new Date('2026-03-01T00:00:00.000Z');

describe('encryption stats', () => {
  it('counts nothing on an empty index and lists every record type and every ring key', () => {
    // Act
    const stats = summarize([], { activeKeyId: 'k2', keyIds: ['k2', 'k1'] }, at);

    // Assess
    expect(stats.active_key_id).toBe('k2');
    expect(stats.tables.map((t) => [t.record_type, t.records, t.values])).toEqual([
      ['user', 0, 0],
      ['signing_key', 0, 0],
      ['deployment', 0, 0],
      ['pending_request', 0, 0],
      ['command', 0, 0],
      ['analysis_settings', 0, 0],
      ['identity_provider', 0, 0],
      ['trigger', 0, 0],
      ['webhook', 0, 0],
    ]);
    expect(stats.keys).toEqual([
      { key_id: 'k1', status: 'retired', records: 0, values: 0 },
      { key_id: 'k2', status: 'active', records: 0, values: 0 },
    ]);
    expect(stats.removable_key_ids).toEqual(['k1']);
    expect(stats.computed_at).toBe('2026-03-01T00:00:00.000Z');
  });

  it('counts records and values per key id, retired and unknown keys apart from the active one', () => {
    // Prepare
    const entries = [
      entry('deployment', { k2: 6 }, 'a'),
      entry('deployment', { k1: 3 }, 'b'),
      entry('deployment', { k1: 1, k2: 2 }, 'c'), // written across a ring change: both keys needed
      entry('user', { gone: 1 }, 'd'),
      entry('user', { k2: 1 }, 'e'),
    ];

    // Act
    const stats = summarize(entries, { activeKeyId: 'k2', keyIds: ['k2', 'k1'] }, at);

    // Assess
    const deployments = stats.tables.find((t) => t.record_type === 'deployment')!;
    expect(deployments).toEqual({
      record_type: 'deployment',
      records: 3,
      values: 12,
      retired_records: 2,
      retired_values: 4,
      keys: [
        { key_id: 'k1', status: 'retired', records: 2, values: 4 },
        { key_id: 'k2', status: 'active', records: 2, values: 8 },
      ],
    });
    expect(stats.tables.find((t) => t.record_type === 'user')).toMatchObject({
      records: 2,
      values: 2,
      retired_records: 1,
      retired_values: 1,
    });
    expect(stats.keys).toEqual([
      { key_id: 'gone', status: 'not_in_keyring', records: 1, values: 1 },
      { key_id: 'k1', status: 'retired', records: 2, values: 4 },
      { key_id: 'k2', status: 'active', records: 3, values: 9 },
    ]);
    expect(stats.total).toEqual({ records: 5, values: 14, retired_records: 3, retired_values: 5 });
    expect(stats.removable_key_ids).toEqual([]); // k1 still holds values
  });

  it('reads every page of the index, never the items', async () => {
    // Prepare
    const index = new FakeEncryptionIndex(1);
    for (const id of ['1', '2', '3'])
      index.put({ pk: `USER#${id}`, sk: 'PROFILE', type: 'user', id, twoFactor: { secret: 'v1.k1.a.b.c' } });

    // Act
    const stats = await encryptionStats({
      index,
      keyring: async () => ({ activeKeyId: 'k1', keyIds: ['k1'] }),
      clock: new FakeClock(at),
    });

    // Assess
    expect(stats.total).toEqual({ records: 3, values: 3, retired_records: 0, retired_values: 0 });
    expect(index.recordsRead).toBe(0);
  });
});
