// Transaction helpers shared by the repositories: the item type, DynamoDB's limit, which item's condition failed,
// and the reference counting items (`refCount`) with which a record keeps what it references from being deleted.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keys, type Key } from './keys.js';
import { getRecord } from './records.js';

export type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/** DynamoDB's limit of items in one transaction. */
export const TRANSACTION_LIMIT = 100;

/**
 * The transaction item that adds (+1) or removes (-1) one reference to the record at `key` (its `refCount`).
 * Adding fails the transaction when the record does not exist; callers turn that into their own error.
 */
export const referenceItem = (tableName: string, key: Key, delta: 1 | -1): TransactItem => ({
  Update: {
    TableName: tableName,
    Key: key,
    UpdateExpression: 'ADD refCount :delta',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':delta': delta },
  },
});

/** One reference to a tenant (see referenceItem). */
export const tenantReference = (tableName: string, tenantId: string, delta: 1 | -1): TransactItem =>
  referenceItem(tableName, keys.tenant(tenantId), delta);

/** The `refCount` of the record at `key`, read after a delete conditioned on it failed; undefined when the record is gone. */
export const referencesOf = (db: DynamoDBDocumentClient, tableName: string, key: Key): Promise<number | undefined> =>
  getRecord(db, tableName, key, (item) => Number(item['refCount'] ?? 0));

/** Whether the transaction item at `index` is the one whose condition failed. */
export const failedAt = (error: unknown, index: number): boolean =>
  ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [])[index]?.Code ===
  'ConditionalCheckFailed';
