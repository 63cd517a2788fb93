// In-memory fakes of the encryption ports: an index kept from items exactly as the DynamoDB adapter derives it (the
// same registry), and verify slots with the adapter's rule (one per caller until its end).
import { encryptedValues, isRecordType, valuesByKey } from '../../domain/encryption/fields.js';
import type {
  EncryptionIndexBackfill,
  EncryptionIndexReader,
  EncryptionIndexWriter,
  IndexEntry,
  Replacement,
  StoredRecord,
  VerifySlots,
} from '../../domain/encryption/ports.js';

const valueAt = (item: Record<string, unknown>, path: readonly string[]): unknown =>
  path.reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], item);

export class FakeEncryptionIndex implements EncryptionIndexReader, EncryptionIndexWriter {
  readonly items = new Map<string, Record<string, unknown>>();
  recordsRead = 0;
  /** Runs before each replace: a test's concurrent write. */
  beforeReplace: (record: StoredRecord) => void = () => undefined;

  constructor(private readonly pageSize = 2) {}

  put(item: Record<string, unknown>): void {
    this.items.set(`${String(item['pk'])}\n${String(item['sk'])}`, item);
  }

  async *entries(): AsyncIterable<readonly IndexEntry[]> {
    const entries: IndexEntry[] = [];
    for (const item of this.items.values()) {
      const type = item['type'];
      if (!isRecordType(type)) continue;
      const values = valuesByKey(encryptedValues(type, item));
      if (Object.keys(values).length === 0) continue;
      entries.push({ recordType: type, key: { pk: String(item['pk']), sk: String(item['sk']) }, values });
    }
    for (let i = 0; i < entries.length; i += this.pageSize) yield entries.slice(i, i + this.pageSize);
  }

  async records(entries: readonly IndexEntry[]): Promise<readonly StoredRecord[]> {
    this.recordsRead += entries.length;
    return entries.flatMap((entry) => {
      const item = this.items.get(`${entry.key.pk}\n${entry.key.sk}`);
      return item === undefined ? [] : [{ recordType: entry.recordType, key: entry.key, item }];
    });
  }

  /** The adapter's rule: every path must still hold `from`, else nothing is written. */
  async replace(record: StoredRecord, replacements: readonly Replacement[]): Promise<boolean> {
    this.beforeReplace(record);
    const key = `${record.key.pk}\n${record.key.sk}`;
    const item = this.items.get(key);
    if (item === undefined || replacements.some(({ path, from }) => valueAt(item, path) !== from)) return false;
    const copy = structuredClone(item);
    for (const { path, to } of replacements) {
      let node = copy;
      for (const part of path.slice(0, -1)) node = node[part] as Record<string, unknown>;
      node[path.at(-1)!] = to;
    }
    this.items.set(key, copy);
    return true;
  }
}

/** Items without an index entry (as written before the index existed), found by a scan. */
export class FakeEncryptionBackfill implements EncryptionIndexBackfill {
  readonly indexed = new Set<string>();
  readonly items: Record<string, unknown>[] = [];

  async *unindexed(_cursor?: string) {
    const records = this.items.flatMap((item): StoredRecord[] => {
      const type = item['type'];
      const key = { pk: String(item['pk']), sk: String(item['sk']) };
      return isRecordType(type) && !this.indexed.has(`${key.pk}\n${key.sk}`) ? [{ recordType: type, key, item }] : [];
    });
    yield { scanned: this.items.length, records, next: undefined };
  }

  async addEntry(record: StoredRecord): Promise<boolean> {
    const key = `${record.key.pk}\n${record.key.sk}`;
    if (this.indexed.has(key)) return false;
    this.indexed.add(key);
    return true;
  }
}

export class FakeVerifySlots implements VerifySlots {
  readonly until = new Map<string, Date>();

  async take(callerId: string, now: Date, until: Date) {
    const current = this.until.get(callerId);
    if (current !== undefined && current.getTime() > now.getTime()) return { takenUntil: current };
    this.until.set(callerId, until);
    return { taken: true } as const;
  }
}
