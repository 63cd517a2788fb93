// The encryption index (gsi4, sparse) and the key verification slots on the single table.
//
// Reading the index is a Scan of gsi4, not of the table: it holds only items with ciphertexts, projected to their
// keys and `encValues`, so its cost grows with the number of encrypted items (about 150 bytes each: one 1 MB page
// answers some 6,000 of them), not with the table. A Query per key id would miss the key ids nobody knows
// (a ciphertext whose key left the ring), which are exactly the ones the stats must show.
import { GetCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isRecordType } from '../../domain/encryption/fields.js';
import type {
  EncryptionIndexReader,
  EncryptionIndexWriter,
  IndexEntry,
  Replacement,
  StoredRecord,
  VerifySlots,
} from '../../domain/encryption/ports.js';
import { conditionally, isConditionFailure } from './conditional.js';
import { encryptionIndexUpdate } from './encryption-index.js';
import { keys } from './keys.js';
import { getRecords, type Item } from './records.js';

export const ENCRYPTION_INDEX = 'gsi4';

/** Paths one UpdateItem rewrites at most (its expression must stay under 4 KB); more go in several writes. */
export const PATHS_PER_WRITE = 24;

const toEntry = (item: Item): IndexEntry | undefined => {
  const recordType = String(item['gsi4sk'] ?? '').split('#')[0];
  if (!isRecordType(recordType)) return undefined; // a type this version does not know: not counted
  const values = (item['encValues'] ?? {}) as Record<string, number>;
  return { recordType, key: { pk: String(item['pk']), sk: String(item['sk']) }, values };
};

const clone = (value: unknown): unknown => structuredClone(value);

/** `item` with `to` at each path (a copy). */
const applied = (item: Item, replacements: readonly Replacement[]): Item => {
  const copy = clone(item) as Item;
  for (const { path, to } of replacements) {
    let node = copy as Record<string, unknown>;
    for (const part of path.slice(0, -1)) node = node[part] as Record<string, unknown>;
    node[path.at(-1)!] = to;
  }
  return copy;
};

export class DynamoEncryptionIndex implements EncryptionIndexReader, EncryptionIndexWriter {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly pageSize: number | undefined = undefined,
  ) {}

  async *entries(): AsyncIterable<readonly IndexEntry[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new ScanCommand({
          TableName: this.tableName,
          IndexName: ENCRYPTION_INDEX,
          ExclusiveStartKey: start,
          ...(this.pageSize === undefined ? {} : { Limit: this.pageSize }),
        }),
      );
      yield (page.Items ?? []).map(toEntry).filter((e): e is IndexEntry => e !== undefined);
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  }

  async records(entries: readonly IndexEntry[]): Promise<readonly StoredRecord[]> {
    const typeOf = new Map(entries.map((e) => [`${e.key.pk}\n${e.key.sk}`, e.recordType]));
    const items = await getRecords(
      this.db,
      this.tableName,
      entries.map((e) => ({ pk: e.key.pk, sk: e.key.sk })),
      (item) => item,
    );
    return items.flatMap((item) => {
      const key = { pk: String(item['pk']), sk: String(item['sk']) };
      const recordType = typeOf.get(`${key.pk}\n${key.sk}`);
      return recordType === undefined ? [] : [{ recordType, key, item }];
    });
  }

  async replace(record: StoredRecord, replacements: readonly Replacement[]): Promise<boolean> {
    let item = record.item;
    for (let i = 0; i < replacements.length; i += PATHS_PER_WRITE) {
      const part = replacements.slice(i, i + PATHS_PER_WRITE);
      const next = applied(item, part);
      if (!(await this.#write(record, next, part))) return false;
      item = next;
    }
    return true;
  }

  async #write(record: StoredRecord, next: Item, part: readonly Replacement[]): Promise<boolean> {
    const names = new Map<string, string>();
    const nameOf = (segment: string) => {
      if (!names.has(segment)) names.set(segment, `#p${names.size}`);
      return names.get(segment)!;
    };
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const conditions = ['attribute_exists(pk)'];
    part.forEach(({ path, from, to }, n) => {
      const expression = path.map(nameOf).join('.');
      values[`:from${n}`] = from;
      values[`:to${n}`] = to;
      sets.push(`${expression} = :to${n}`);
      conditions.push(`${expression} = :from${n}`);
    });
    const index = encryptionIndexUpdate(record.recordType, record.key, next);
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: record.key.pk, sk: record.key.sk },
          UpdateExpression: `SET ${[...sets, ...(index.set ? [index.set] : [])].join(', ')}${index.remove ? ` REMOVE ${index.remove}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: Object.fromEntries([...names].map(([segment, name]) => [name, segment])),
          ExpressionAttributeValues: { ...values, ...index.values },
        }),
      ),
    );
  }
}

/** One verification per caller per window: item `until` (epoch ms) and `ttl` (epoch s), taken conditionally. */
export class DynamoVerifySlots implements VerifySlots {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async take(callerId: string, now: Date, until: Date) {
    const key = keys.encryptionVerifySlot(callerId);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #until = :until, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(pk) OR #until <= :now',
          ExpressionAttributeNames: { '#until': 'until', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':until': until.getTime(),
            ':now': now.getTime(),
            ':ttl': Math.ceil(until.getTime() / 1000) + 60,
          },
        }),
      );
      return { taken: true } as const;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
      );
      return { takenUntil: new Date(Number(Item?.['until'] ?? until.getTime())) };
    }
  }
}
