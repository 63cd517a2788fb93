// The one-time backfill of the encryption index (domain/encryption/backfill.ts): a paged Scan of the whole table,
// filtered to items of registered record types without `gsi4pk`, and for each one found its entry written through
// the same registry as every write (infra/dynamodb/encryption-index.ts).
//
// Cost: the filter saves transfer, not reads. DynamoDB bills a Scan for every item it reads, so a backfill reads the
// whole table once: one eventually consistent read unit per 8 KB (10 GB: about 1.3 million read units), plus one
// write unit per item indexed (per KB of the item: an UpdateItem is billed on the larger of the item's sizes).
// It is the only code that scans the table itself; everything else reads the sparse index.
import { UpdateCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { encryptedValues, isRecordType, RECORD_TYPES } from '../../domain/encryption/fields.js';
import type { EncryptionIndexBackfill, StoredRecord } from '../../domain/encryption/ports.js';
import { conditionally } from './conditional.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { encryptionIndexUpdate } from './encryption-index.js';
import { PATHS_PER_WRITE } from './encryption-store.js';

export class DynamoEncryptionBackfill implements EncryptionIndexBackfill {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly pageSize: number | undefined = undefined,
  ) {}

  async *unindexed(cursor?: string) {
    const types = Object.fromEntries(RECORD_TYPES.map((type, i) => [`:t${i}`, type]));
    let start: Record<string, unknown> | undefined = decodeCursor(cursor);
    do {
      const page = await this.db.send(
        new ScanCommand({
          TableName: this.tableName,
          ExclusiveStartKey: start,
          FilterExpression: `attribute_not_exists(gsi4pk) AND #type IN (${Object.keys(types).join(', ')})`,
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: types,
          ...(this.pageSize === undefined ? {} : { Limit: this.pageSize }),
        }),
      );
      const records = (page.Items ?? []).flatMap((item): StoredRecord[] => {
        const recordType = item['type'];
        return isRecordType(recordType)
          ? [{ recordType, key: { pk: String(item['pk']), sk: String(item['sk']) }, item }]
          : [];
      });
      start = page.LastEvaluatedKey;
      yield {
        scanned: page.ScannedCount ?? 0,
        records,
        next: encodeCursor(start as Record<string, string> | undefined),
      };
    } while (start !== undefined);
  }

  /** The entry, only while the item has none and its encrypted fields (the first PATHS_PER_WRITE) hold what was read. */
  async addEntry(record: StoredRecord): Promise<boolean> {
    const index = encryptionIndexUpdate(record.recordType, record.key, record.item);
    if (index.set === undefined) return false;
    const names = new Map<string, string>();
    const nameOf = (segment: string) => {
      if (!names.has(segment)) names.set(segment, `#p${names.size}`);
      return names.get(segment)!;
    };
    const held: Record<string, unknown> = {};
    const conditions = ['attribute_exists(pk)', 'attribute_not_exists(gsi4pk)'];
    encryptedValues(record.recordType, record.item)
      .slice(0, PATHS_PER_WRITE)
      .forEach(({ path, stored }, n) => {
        held[`:held${n}`] = stored;
        conditions.push(`${path.map(nameOf).join('.')} = :held${n}`);
      });
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: record.key.pk, sk: record.key.sk },
          UpdateExpression: `SET ${index.set}`,
          ConditionExpression: conditions.join(' AND '),
          ...(names.size === 0
            ? {}
            : { ExpressionAttributeNames: Object.fromEntries([...names].map(([segment, name]) => [name, segment])) }),
          ExpressionAttributeValues: { ...held, ...index.values },
        }),
      ),
    );
  }
}
