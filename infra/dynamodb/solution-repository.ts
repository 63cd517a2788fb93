// SolutionRepository (and the SolutionLookup other contexts use) on the single table: the solution item (with
// `sequenceIds`, the distinct sequences it uses), its short-id alias and a reference to its tenant; in the same
// transaction each write moves the `refCount` of the sequences it starts or stops using (conditioned on them
// existing), so a sequence cannot be deleted while a solution is being written that uses it. Records of other
// contexts that reference a solution add `solutionReference(...)` to their transaction; the delete waits for 0.
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ValidationError } from '../../domain/errors.js';
import { ConcurrentChangeError } from '../../domain/catalog/errors.js';
import type { ReferenceChange, SolutionRepository } from '../../domain/catalog/ports.js';
import type { Solution } from '../../domain/catalog/types.js';
import type { SolutionRef } from '../../domain/shared/lookups.js';
import type { TransactItem } from './action-repository.js';
import { aliasItem, resolveId } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys } from './keys.js';
import { queryAll } from './query-all.js';
import { referenceUpdates } from './sequence-repository.js';
import { failedAt, tenantReference } from './tenant-repository.js';

/** The transaction item that adds (+1) or removes (-1) a reference to a solution; adding fails when it is gone. */
export const solutionReference = (tableName: string, solutionId: string, delta: 1 | -1): TransactItem => ({
  Update: {
    TableName: tableName,
    Key: keys.solution(solutionId),
    UpdateExpression: 'ADD refCount :delta',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':delta': delta },
  },
});

const toSolution = (item: Record<string, unknown>): Solution => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  description: (item['description'] as string | null | undefined) ?? null,
  version: String(item['version']),
  tenantId: (item['tenantId'] as string | null | undefined) ?? null,
  sequences: ((item['sequences'] as Record<string, unknown>[] | undefined) ?? []).map((e) => ({ order: Number(e['order']), sequenceId: String(e['sequenceId']) })),
  revision: Number(item['revision'] ?? 0),
  refCount: Number(item['refCount'] ?? 0),
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

const sequenceIdsOf = (solution: Solution): string[] => [...new Set(solution.sequences.map((e) => e.sequenceId))];

export class DynamoSolutionRepository implements SolutionRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findSolution(idOrShortId: string): Promise<SolutionRef | undefined> {
    const solution = await this.find(idOrShortId);
    return solution === undefined ? undefined : { id: solution.id, shortId: solution.shortId, name: solution.name, tenantId: solution.tenantId };
  }

  async listAll(): Promise<readonly Solution[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :solutions',
      ExpressionAttributeValues: { ':solutions': 'SOLUTIONS' },
    });
    return items.map(toSolution);
  }

  async find(idOrShortId: string): Promise<Solution | undefined> {
    const id = await resolveId(this.db, this.tableName, 'solution', idOrShortId);
    if (id === undefined) return undefined;
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: keys.solution(id), ConsistentRead: true }));
    return Item === undefined ? undefined : toSolution(Item);
  }

  async create(solution: Solution, sequences: readonly ReferenceChange[]): Promise<void> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: { ...keys.solution(solution.id), ...keys.solutionsIndex(solution.createdAt, solution.id), type: 'solution', ...solution, sequenceIds: sequenceIdsOf(solution) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      { Put: { TableName: this.tableName, Item: aliasItem('solution', solution.shortId, solution.id), ConditionExpression: 'attribute_not_exists(pk)' } },
      ...(solution.tenantId === null ? [] : [tenantReference(this.tableName, solution.tenantId, 1)]),
    ];
    await this.#transact([...items, ...referenceUpdates(this.tableName, keys.sequence, sequences)], solution, solution.tenantId === null ? -1 : 2);
  }

  async update(previous: Solution, next: Solution, sequences: readonly ReferenceChange[]): Promise<void> {
    // An Update, not a Put: references from other contexts move `refCount` and must be kept.
    const item: TransactItem = {
      Update: {
        TableName: this.tableName,
        Key: keys.solution(previous.id),
        UpdateExpression: 'SET #name = :name, #description = :description, #version = :version, #sequences = :sequences, sequenceIds = :sequenceIds, updatedAt = :at, revision = :next',
        ConditionExpression: 'revision = :seen',
        ExpressionAttributeNames: { '#name': 'name', '#description': 'description', '#version': 'version', '#sequences': 'sequences' },
        ExpressionAttributeValues: {
          ':name': next.name,
          ':description': next.description,
          ':version': next.version,
          ':sequences': next.sequences,
          ':sequenceIds': sequenceIdsOf(next),
          ':at': next.updatedAt,
          ':next': next.revision,
          ':seen': previous.revision,
        },
      },
    };
    await this.#transact([item, ...referenceUpdates(this.tableName, keys.sequence, sequences)], previous, -1);
  }

  async delete(solution: Solution, sequences: readonly ReferenceChange[]): Promise<void> {
    const items: TransactItem[] = [
      {
        Delete: {
          TableName: this.tableName,
          Key: keys.solution(solution.id),
          ConditionExpression: 'revision = :seen AND (attribute_not_exists(refCount) OR refCount = :zero)',
          ExpressionAttributeValues: { ':seen': solution.revision, ':zero': 0 },
        },
      },
      { Delete: { TableName: this.tableName, Key: keys.shortId('solution', solution.shortId) } },
      ...(solution.tenantId === null ? [] : [tenantReference(this.tableName, solution.tenantId, -1)]),
    ];
    await this.#transact([...items, ...referenceUpdates(this.tableName, keys.sequence, sequences)], solution, -1);
  }

  /** The transaction; the tenant reference (at `tenantIndex`, -1 for none) failing is a vanished tenant, anything else a race. */
  async #transact(items: TransactItem[], solution: Solution, tenantIndex: number): Promise<void> {
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (tenantIndex >= 0 && failedAt(error, tenantIndex)) throw ValidationError.field('tenant_id', `There is no tenant '${solution.tenantId}'.`);
      throw new ConcurrentChangeError(`Solution '${solution.name}' or a sequence it uses`);
    }
  }
}
