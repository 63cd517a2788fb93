// SequenceRepository on the single table: the sequence item (with `actionIds`, the distinct actions its steps
// use, for the "who uses this action" query), its short-id alias and a reference to its tenant. In the same
// transaction each write moves the `refCount` of the actions it starts or stops using, and the `revision` of
// the actions it validated its steps against (conditioned on the revision it saw): see domain/catalog/ports.ts.
// The write items and error mapping (createItems, reviseItem, deleteItems, transactReferencing) are in
// catalog-transactions.ts, shared with solution-repository.ts, whose records reference sequences the same way.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReferenceChange, SequenceRepository } from '../../domain/catalog/ports.js';
import type { Sequence } from '../../domain/catalog/types.js';
import { createItems, deleteItems, referenceUpdates, reviseItem, transactReferencing } from './catalog-transactions.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition, type Filter } from './records.js';
import type { TransactItem } from './transactions.js';

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
