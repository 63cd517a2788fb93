// SequenceRepository on the single table: the sequence item (with `actionIds`, the distinct actions its steps
// use, for the "who uses this action" query), its short-id alias and a reference to its tenant. In the same
// transaction each write moves the `refCount` of the actions it starts or stops using, and the `revision` of
// the actions it validated its steps against (conditioned on the revision it saw): see domain/catalog/ports.ts.
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../../domain/errors.js';
import { ConcurrentChangeError } from '../../domain/catalog/errors.js';
import type { ReferenceChange, SequenceRepository } from '../../domain/catalog/ports.js';
import type { Sequence } from '../../domain/catalog/types.js';
import type { Key } from './keys.js';
import { aliasItem, resolveId } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys } from './keys.js';
import { queryAll } from './query-all.js';
import type { TransactItem } from './action-repository.js';
import { failedAt, tenantReference } from './tenant-repository.js';

/**
 * Transaction items applying reference changes to the records at `keyOf(id)`: `ADD refCount delta`, and with a
 * revision `SET revision = revision + 1` conditioned on it; without one, conditioned on the record existing.
 */
export const referenceUpdates = (tableName: string, keyOf: (id: string) => Key, changes: readonly ReferenceChange[]): TransactItem[] =>
  changes.flatMap((change): TransactItem[] => {
    if (change.revision === undefined) {
      if (change.delta === 0) return [];
      return [{ Update: { TableName: tableName, Key: keyOf(change.id), UpdateExpression: 'ADD refCount :delta', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':delta': change.delta } } }];
    }
    return [
      {
        Update: {
          TableName: tableName,
          Key: keyOf(change.id),
          UpdateExpression: change.delta === 0 ? 'SET revision = :next' : 'SET revision = :next ADD refCount :delta',
          ConditionExpression: 'revision = :seen',
          ExpressionAttributeValues: { ':seen': change.revision, ':next': change.revision + 1, ...(change.delta === 0 ? {} : { ':delta': change.delta }) },
        },
      },
    ];
  });

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
    return (await this.#query()).map(toSequence);
  }

  async listUsingAction(actionId: string): Promise<readonly Sequence[]> {
    return (await this.#query({ FilterExpression: 'contains(actionIds, :action)', ExpressionAttributeValues: { ':action': actionId } })).map(toSequence);
  }

  async find(idOrShortId: string): Promise<Sequence | undefined> {
    const id = await resolveId(this.db, this.tableName, 'sequence', idOrShortId);
    if (id === undefined) return undefined;
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keys.sequence(id), ConsistentRead: true }));
    return Item === undefined ? undefined : toSequence(Item);
  }

  async create(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.sequence(sequence.id), ...keys.sequencesIndex(sequence.createdAt, sequence.id), type: 'sequence', ...sequence, actionIds: actionIdsOf(sequence) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      { Put: { TableName: this.tableName, Item: aliasItem('sequence', sequence.shortId, sequence.id), ConditionExpression: 'attribute_not_exists(pk)' } },
      ...(sequence.tenantId === null ? [] : [tenantReference(this.tableName, sequence.tenantId, 1)]),
    ];
    await this.#transact([...items, ...referenceUpdates(this.tableName, keys.action, actions)], sequence, sequence.tenantId === null ? -1 : 2);
  }

  async update(previous: Sequence, next: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    // An Update, not a Put: solutions move `refCount` without touching the revision, and it must be kept.
    const item: TransactItem = {
      Update: {
        TableName: this.tableName,
        Key: keys.sequence(previous.id),
        UpdateExpression: 'SET #name = :name, #description = :description, #version = :version, steps = :steps, actionIds = :actionIds, updatedAt = :at, revision = :next',
        ConditionExpression: 'revision = :seen',
        ExpressionAttributeNames: { '#name': 'name', '#description': 'description', '#version': 'version' },
        ExpressionAttributeValues: {
          ':name': next.name,
          ':description': next.description,
          ':version': next.version,
          ':steps': next.steps,
          ':actionIds': actionIdsOf(next),
          ':at': next.updatedAt,
          ':next': next.revision,
          ':seen': previous.revision,
        },
      },
    };
    await this.#transact([item, ...referenceUpdates(this.tableName, keys.action, actions)], previous, -1);
  }

  async delete(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    const items: TransactItem[] = [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.sequence(sequence.id),
          ConditionExpression: 'revision = :seen AND (attribute_not_exists(refCount) OR refCount = :zero)',
          ExpressionAttributeValues: { ':seen': sequence.revision, ':zero': 0 },
        },
      },
      { Delete: { TableName: this.tableName, Key: keys.shortId('sequence', sequence.shortId) } },
      ...(sequence.tenantId === null ? [] : [tenantReference(this.tableName, sequence.tenantId, -1)]),
    ];
    await this.#transact([...items, ...referenceUpdates(this.tableName, keys.action, actions)], sequence, -1);
  }

  async #query(filter: { FilterExpression: string; ExpressionAttributeValues: Record<string, unknown> } | undefined = undefined) {
    return queryAll(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :sequences',
      ...(filter === undefined ? {} : { FilterExpression: filter.FilterExpression }),
      ExpressionAttributeValues: { ':sequences': 'SEQUENCES', ...filter?.ExpressionAttributeValues },
    });
  }

  /** The transaction; the tenant reference (at `tenantIndex`, -1 for none) failing is a vanished tenant, anything else a race. */
  async #transact(items: TransactItem[], sequence: Sequence, tenantIndex: number): Promise<void> {
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (tenantIndex >= 0 && failedAt(error, tenantIndex)) throw ValidationError.field('tenant_id', `There is no tenant '${sequence.tenantId}'.`);
      throw new ConcurrentChangeError(`Sequence '${sequence.name}' or an action it uses`);
    }
  }
}
