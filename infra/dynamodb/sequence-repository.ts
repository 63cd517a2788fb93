// SequenceRepository on the single table: the sequence item (with `actionIds`, the distinct actions its steps
// use, for the "who uses this action" query), its short-id alias and a reference to its tenant. In the same
// transaction each write moves the `refCount` of the actions it starts or stops using, and the `revision` of
// the actions it validated its steps against (conditioned on the revision it saw): see domain/catalog/ports.ts.
// The write items and error mapping (createItems, reviseItem, deleteItems, transactReferencing) are in
// catalog-transactions.ts, shared with solution-repository.ts, whose records reference sequences the same way.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReferenceChange, SequenceRepository } from '../../domain/catalog/ports.js';
import type { Sequence } from '../../domain/catalog/types.js';
import { referencingWrites, type ReferencingKind } from './catalog-transactions.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition, type Filter } from './records.js';

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

/** Sequences reference actions: the fields an update sets, with the distinct actions the steps use. */
const sequenceKind: ReferencingKind<Sequence> = {
  entity: 'sequence',
  key: keys.sequence,
  indexKey: keys.sequencesIndex,
  referenced: keys.action,
  fields: (sequence) => ({
    name: sequence.name,
    description: sequence.description,
    version: sequence.version,
    steps: sequence.steps,
    actionIds: actionIdsOf(sequence),
  }),
  raced: (sequence) => `Sequence '${sequence.name}' or an action it uses`,
};

export class DynamoSequenceRepository implements SequenceRepository {
  readonly #writes: ReturnType<typeof referencingWrites<Sequence>>;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.#writes = referencingWrites(db, tableName, sequenceKind);
  }

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
    await this.#writes.create(sequence, actions);
  }

  async update(previous: Sequence, next: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    await this.#writes.update(previous, next, actions);
  }

  async delete(sequence: Sequence, actions: readonly ReferenceChange[]): Promise<void> {
    await this.#writes.delete(sequence, actions);
  }

  async #query(filter: Filter | undefined = undefined): Promise<Sequence[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.sequences, toSequence, filter);
  }
}
