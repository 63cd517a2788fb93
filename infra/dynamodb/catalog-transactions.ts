// The transaction builders of catalog records that reference other records (a sequence references actions, a
// solution sequences): the reference updates (`refCount`, and `revision` where the writer validated against it),
// the create, revise and delete items of the record with its short-id alias and tenant reference, and running the
// transaction with its errors mapped (a vanished tenant, a concurrent change). Shared by sequence-repository.ts and
// solution-repository.ts.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConcurrentChangeError } from '../../domain/catalog/errors.js';
import type { ReferenceChange } from '../../domain/catalog/ports.js';
import { ValidationError } from '../../domain/errors.js';
import { aliasItem } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys, type Key } from './keys.js';
import { failedAt, tenantReference, type TransactItem } from './transactions.js';

/**
 * Transaction items applying reference changes to the records at `keyOf(id)`: `ADD refCount delta`, and with a
 * revision `SET revision = revision + 1` conditioned on it; without one, conditioned on the record existing.
 */
export const referenceUpdates = (
  tableName: string,
  keyOf: (id: string) => Key,
  changes: readonly ReferenceChange[],
): TransactItem[] =>
  changes.flatMap((change): TransactItem[] => {
    if (change.revision === undefined) {
      if (change.delta === 0) return [];
      return [
        {
          Update: {
            TableName: tableName,
            Key: keyOf(change.id),
            UpdateExpression: 'ADD refCount :delta',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':delta': change.delta },
          },
        },
      ];
    }
    return [
      {
        Update: {
          TableName: tableName,
          Key: keyOf(change.id),
          UpdateExpression: change.delta === 0 ? 'SET revision = :next' : 'SET revision = :next ADD refCount :delta',
          ConditionExpression: 'revision = :seen',
          ExpressionAttributeValues: {
            ':seen': change.revision,
            ':next': change.revision + 1,
            ...(change.delta === 0 ? {} : { ':delta': change.delta }),
          },
        },
      },
    ];
  });

/** A catalog record that references other records (a sequence, a solution): what its writes need. */
interface ReferencingRecord {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly tenantId: string | null;
  readonly revision: number;
}

/** Creating `record`: its item and short-id alias (both only when new) and, for a tenant's record, the tenant reference at index 2. */
export const createItems = (
  tableName: string,
  entity: string,
  record: ReferencingRecord,
  item: Record<string, unknown>,
): TransactItem[] => [
  { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
  {
    Put: {
      TableName: tableName,
      Item: aliasItem(entity, record.shortId, record.id),
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  },
  ...(record.tenantId === null ? [] : [tenantReference(tableName, record.tenantId, 1)]),
];

/** Deleting `record` at `key`: only while its revision is unchanged and nothing references it; its alias and tenant reference go with it. */
export const deleteItems = (tableName: string, entity: string, key: Key, record: ReferencingRecord): TransactItem[] => [
  {
    Delete: {
      TableName: tableName,
      Key: key,
      ConditionExpression: 'revision = :seen AND (attribute_not_exists(refCount) OR refCount = :zero)',
      ExpressionAttributeValues: { ':seen': record.revision, ':zero': 0 },
    },
  },
  { Delete: { TableName: tableName, Key: keys.shortId(entity, record.shortId) } },
  ...(record.tenantId === null ? [] : [tenantReference(tableName, record.tenantId, -1)]),
];

/**
 * Updating `previous` to `next` with `fields` (each set as is), updatedAt and the next revision, only while its
 * revision is unchanged. An Update, not a Put: other writes move `refCount` without touching the revision.
 */
export const reviseItem = (
  tableName: string,
  key: Key,
  previous: ReferencingRecord,
  next: ReferencingRecord & { readonly updatedAt: string },
  fields: Record<string, unknown>,
): TransactItem => {
  const names = Object.keys(fields);
  return {
    Update: {
      TableName: tableName,
      Key: key,
      UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}, updatedAt = :at, revision = :next`,
      ConditionExpression: 'revision = :seen',
      ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
      ExpressionAttributeValues: {
        ...Object.fromEntries(names.map((name) => [`:${name}`, fields[name]])),
        ':at': next.updatedAt,
        ':next': next.revision,
        ':seen': previous.revision,
      },
    },
  };
};

/**
 * Runs a referencing record's transaction; the tenant reference (at `tenantIndex`, -1 for none) failing is a
 * vanished tenant, anything else a race (`raced` names what may have changed).
 */
export const transactReferencing = async (
  db: DynamoDBDocumentClient,
  items: TransactItem[],
  record: ReferencingRecord,
  tenantIndex: number,
  raced: string,
): Promise<void> => {
  try {
    await db.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    if (tenantIndex >= 0 && failedAt(error, tenantIndex))
      throw ValidationError.field('tenant_id', `There is no tenant '${record.tenantId}'.`);
    throw new ConcurrentChangeError(raced);
  }
};

/** What tells one kind of referencing record from another: its keys, the records it references, its fields. */
export interface ReferencingKind<T extends ReferencingRecord> {
  readonly entity: string;
  readonly key: (id: string) => Key;
  readonly indexKey: (createdAt: string, id: string) => Record<string, string>;
  /** The key of a record it references (an action, a sequence). */
  readonly referenced: (id: string) => Key;
  /** The fields an update sets (each as is), also added to the created item. */
  readonly fields: (record: T) => Record<string, unknown>;
  /** What may have changed when its transaction loses a race. */
  readonly raced: (record: T) => string;
}

/**
 * The create, update and delete of a kind of referencing record: each one transaction holding the record's items
 * and the reference changes of the records it references (see referenceUpdates).
 */
export const referencingWrites = <
  T extends ReferencingRecord & { readonly createdAt: string; readonly updatedAt: string },
>(
  db: DynamoDBDocumentClient,
  tableName: string,
  kind: ReferencingKind<T>,
) => {
  const transact = (items: TransactItem[], record: T, tenantIndex: number, changes: readonly ReferenceChange[]) =>
    transactReferencing(
      db,
      [...items, ...referenceUpdates(tableName, kind.referenced, changes)],
      record,
      tenantIndex,
      kind.raced(record),
    );
  return {
    create: async (record: T, changes: readonly ReferenceChange[]): Promise<void> => {
      const item = {
        ...kind.key(record.id),
        ...kind.indexKey(record.createdAt, record.id),
        type: kind.entity,
        ...record,
        ...kind.fields(record),
      };
      const items = createItems(tableName, kind.entity, record, item);
      await transact(items, record, record.tenantId === null ? -1 : 2, changes);
    },
    // Others move `refCount` without touching the revision: reviseItem keeps it.
    update: async (previous: T, next: T, changes: readonly ReferenceChange[]): Promise<void> => {
      const item = reviseItem(tableName, kind.key(previous.id), previous, next, kind.fields(next));
      await transact([item], previous, -1, changes);
    },
    delete: async (record: T, changes: readonly ReferenceChange[]): Promise<void> => {
      await transact(deleteItems(tableName, kind.entity, kind.key(record.id), record), record, -1, changes);
    },
  };
};
