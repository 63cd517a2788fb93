// Read patterns every record repository shares: one record by key (consistent), one by UUID or short id, every
// record of a gsi partition, and an item without its table attributes. Writes stay in each repository: their
// transactions and conditions are what make them race-safe.
import { BatchGetCommand, GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { whenCondition } from './conditional.js';
import { resolveId } from './aliases.js';
import type { Key } from './keys.js';
import { queryAll } from './query-all.js';

export type Item = Record<string, unknown>;

/** The record at `key` (a consistent read), mapped; undefined when it does not exist. */
export const getRecord = async <T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  key: Key,
  map: (item: Item) => T,
): Promise<T | undefined> => {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item === undefined ? undefined : map(Item);
};

/**
 * The records at `keys` (consistent batch reads of at most 100 keys, unprocessed keys asked again), mapped, in no
 * particular order; missing ones are left out. With `attributes`, only those are read back.
 */
export const getRecords = async <T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Key[],
  map: (item: Item) => T,
  attributes?: readonly string[],
): Promise<T[]> => {
  const found: T[] = [];
  const projection =
    attributes === undefined
      ? {}
      : {
          ProjectionExpression: attributes.map((name) => `#${name}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(attributes.map((name) => [`#${name}`, name])),
        };
  for (let i = 0; i < keys.length; i += 100) {
    let request: Record<string, { Keys: Key[]; ConsistentRead: boolean }> | undefined = {
      [tableName]: { Keys: keys.slice(i, i + 100), ConsistentRead: true, ...projection },
    };
    for (let round = 0; request !== undefined && Object.keys(request).length > 0; round += 1) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** round)));
      const answer = await db.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of answer.Responses?.[tableName] ?? []) found.push(map(item));
      request = answer.UnprocessedKeys as typeof request;
    }
  }
  return found;
};

/** The record of `entity` named by its UUID or short id (see aliases.ts), mapped; undefined when either is missing. */
export const findRecord = async <T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  entity: string,
  keyOf: (id: string) => Key,
  idOrShortId: string,
  map: (item: Item) => T,
): Promise<T | undefined> => {
  const id = await resolveId(db, tableName, entity, idOrShortId);
  return id === undefined ? undefined : getRecord(db, tableName, keyOf(id), map);
};

/** An optional filter on a partition's items; its placeholders must not be `:pk`. */
export interface Filter {
  readonly FilterExpression: string;
  readonly ExpressionAttributeValues: Record<string, unknown>;
}

/** Every item of the partition `pk` of a gsi (in its sort order), optionally filtered, mapped. */
export const listPartition = async <T>(
  db: DynamoDBDocumentClient,
  tableName: string,
  index: 'gsi1' | 'gsi2',
  pk: string,
  map: (item: Item) => T,
  filter: Filter | undefined = undefined,
): Promise<T[]> => {
  const items = await queryAll(db, {
    TableName: tableName,
    IndexName: index,
    KeyConditionExpression: `${index}pk = :pk`,
    ...(filter === undefined ? {} : { FilterExpression: filter.FilterExpression }),
    ExpressionAttributeValues: { ':pk': pk, ...filter?.ExpressionAttributeValues },
  });
  return items.map(map);
};

const TABLE_ATTRIBUTE = /^(pk|sk|type|gsi\d+(pk|sk)|encValues)$/;

/** The item without its table attributes (pk, sk, type, gsi keys, encValues): the record as the domain wrote it. */
export const stripKeys = <T>(item: Item): T =>
  Object.fromEntries(Object.entries(item).filter(([name]) => !TABLE_ATTRIBUTE.test(name))) as T;

/**
 * Writes `changes` (attributes by name; undefined ones are left alone) and `updatedAt` to the record at `key` if its
 * `revision` is still `revision`, and moves the revision on: the record as written, or undefined when it moved.
 */
export const updateAtRevision = async (
  db: DynamoDBDocumentClient,
  tableName: string,
  key: Key,
  revision: number,
  changes: Readonly<Record<string, unknown>>,
  at: string,
): Promise<Item | undefined> => {
  const names: Record<string, string> = { '#revision': 'revision', '#updatedAt': 'updatedAt' };
  const values: Record<string, unknown> = { ':revision': revision, ':one': 1, ':at': at };
  const sets = ['#updatedAt = :at'];
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    names[`#${name}`] = name;
    values[`:${name}`] = value;
    sets.push(`#${name} = :${name}`);
  }
  const answer = await whenCondition(
    db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')} ADD #revision :one`,
        ConditionExpression: '#revision = :revision',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return answer?.Attributes;
};
