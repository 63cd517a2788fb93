// SequenceRepository on the single table: the sequence item (with `actionIds`, the distinct actions its steps
// use, for the "who uses this action" query), its short-id alias and a reference to its tenant. In the same
// transaction each write moves the `refCount` of the actions it starts or stops using, and the `revision` of
// the actions it validated its steps against (conditioned on the revision it saw): see domain/catalog/ports.ts.
// The write items and error mapping here (createItems, reviseItem, deleteItems, transactReferencing) serve
// solution-repository.ts too, whose records reference sequences the same way.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../../domain/errors.js';
import { ConcurrentChangeError } from '../../domain/catalog/errors.js';
import type { ReferenceChange, SequenceRepository } from '../../domain/catalog/ports.js';
import type { Sequence } from '../../domain/catalog/types.js';
import type { Key } from './keys.js';
import { aliasItem } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition, type Filter } from './records.js';
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

const toSequence = (item: Record<string, unknown>): Sequence => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  description: (item['description'] as string | null | undefined) ?? null,
  version: String(item['version']),
  tenantId: (item['tenantId'] as string | null | undefined) ?? null,
  steps: ((item['steps'] as Record<string, unknown>[] | undefined) ?? []).map((s) => ({
    order: Number(s['order']),
    actionId: String(s['actionId']),
    versionRequirement: (s['versionRequirement'] as string | null | undefined) ?? null,
  })),
  revision: Number(item['revision'] ?? 0),
  refCount: Number(item['refCount'] ?? 0),
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

const actionIdsOf = (sequence: Sequence): string[] => [...new Set(sequence.steps.map((s) => s.actionId))];

export class DynamoSequenceRepository implements SequenceRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async listAll(): Promise<readonly Sequence[]> {
    return this.#query();
  }

  async listUsingAction(actionId: string): Promise<readonly Sequence[]> {
    return this.#query({
      FilterExpression: 'contains(actionIds, :action)',
      ExpressionAttributeValues: { ':action': actionId },
    });
  }

  async find(idOrShortId: string): Promise<Sequence | undefined> {
    return findRecord(this.db, this.tableName, 'sequence', keys.sequence, idOrShortId, toSequence);
  }

  async create(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    const item = {
      ...keys.sequence(sequence.id),
      ...keys.sequencesIndex(sequence.createdAt, sequence.id),
      type: 'sequence',
      ...sequence,
      actionIds: actionIdsOf(sequence),
    };
    const items = createItems(this.tableName, 'sequence', sequence, item);
    await this.#transact(
      [...items, ...referenceUpdates(this.tableName, keys.action, actions)],
      sequence,
      sequence.tenantId === null ? -1 : 2,
    );
  }

  async update(previous: Sequence, next: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    // Solutions move `refCount` without touching the revision: reviseItem keeps it.
    const fields = {
      name: next.name,
      description: next.description,
      version: next.version,
      steps: next.steps,
      actionIds: actionIdsOf(next),
    };
    const item = reviseItem(this.tableName, keys.sequence(previous.id), previous, next, fields);
    await this.#transact([item, ...referenceUpdates(this.tableName, keys.action, actions)], previous, -1);
  }

  async delete(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    const items = deleteItems(this.tableName, 'sequence', keys.sequence(sequence.id), sequence);
    await this.#transact([...items, ...referenceUpdates(this.tableName, keys.action, actions)], sequence, -1);
  }

  async #query(filter: Filter | undefined = undefined): Promise<Sequence[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.sequences, toSequence, filter);
  }

  async #transact(items: TransactItem[], sequence: Sequence, tenantIndex: number): Promise<void> {
    await transactReferencing(
      this.db,
      items,
      sequence,
      tenantIndex,
      `Sequence '${sequence.name}' or an action it uses`,
    );
  }
}
