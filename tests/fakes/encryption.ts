// In-memory fakes of the encryption ports: an index kept from items exactly as the DynamoDB adapter derives it (the
// same registry), and verify slots with the adapter's rule (one per caller until its end).
import { encryptedValues, isRecordType, valuesByKey } from '../../domain/encryption/fields.js';
import type { EncryptionIndexReader, IndexEntry, StoredRecord, VerifySlots } from '../../domain/encryption/ports.js';

export class FakeEncryptionIndex implements EncryptionIndexReader {
  readonly items = new Map<string, Record<string, unknown>>();
  recordsRead = 0;

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
