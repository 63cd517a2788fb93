// SolutionRepository (and the SolutionLookup other contexts use) on the single table: the solution item (with
// `sequenceIds`, the distinct sequences it uses), its short-id alias and a reference to its tenant; in the same
// transaction each write moves the `refCount` of the sequences it starts or stops using (conditioned on them
// existing), so a sequence cannot be deleted while a solution is being written that uses it. Records of other
// contexts that reference a solution add `solutionReference(...)` to their transaction; the delete waits for 0.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReferenceChange, SolutionRepository } from '../../domain/catalog/ports.js';
import type { Solution } from '../../domain/catalog/types.js';
import type { SolutionRef } from '../../domain/shared/lookups.js';
import { referencingWrites, type ReferencingKind } from './catalog-transactions.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition } from './records.js';
import { referenceItem, type TransactItem } from './transactions.js';

/** The transaction item that adds (+1) or removes (-1) a reference to a solution; adding fails when it is gone. */
export const solutionReference = (tableName: string, solutionId: string, delta: 1 | -1): TransactItem =>
  referenceItem(tableName, keys.solution(solutionId), delta);

const toSolution = (item: Record<string, unknown>): Solution => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  description: (item['description'] as string | null | undefined) ?? null,
  version: String(item['version']),
  tenantId: (item['tenantId'] as string | null | undefined) ?? null,
  sequences: ((item['sequences'] as Record<string, unknown>[] | undefined) ?? []).map((e) => ({
    order: Number(e['order']),
    sequenceId: String(e['sequenceId']),
  })),
  revision: Number(item['revision'] ?? 0),
  refCount: Number(item['refCount'] ?? 0),
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

const sequenceIdsOf = (solution: Solution): string[] => [...new Set(solution.sequences.map((e) => e.sequenceId))];

/** Solutions reference sequences: the fields an update sets, with the distinct sequences it uses. */
const solutionKind: ReferencingKind<Solution> = {
  entity: 'solution',
  key: keys.solution,
  indexKey: keys.solutionsIndex,
  referenced: keys.sequence,
  fields: (solution) => ({
    name: solution.name,
    description: solution.description,
    version: solution.version,
    sequences: solution.sequences,
    sequenceIds: sequenceIdsOf(solution),
  }),
  raced: (solution) => `Solution '${solution.name}' or a sequence it uses`,
};

export class DynamoSolutionRepository implements SolutionRepository {
  readonly #writes: ReturnType<typeof referencingWrites<Solution>>;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.#writes = referencingWrites(db, tableName, solutionKind);
  }

  async findSolution(idOrShortId: string): Promise<SolutionRef | undefined> {
    const solution = await this.find(idOrShortId);
    return solution === undefined
      ? undefined
      : { id: solution.id, shortId: solution.shortId, name: solution.name, tenantId: solution.tenantId };
  }

  async listAll(): Promise<readonly Solution[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.solutions, toSolution);
  }

  async find(idOrShortId: string): Promise<Solution | undefined> {
    return findRecord(this.db, this.tableName, 'solution', keys.solution, idOrShortId, toSolution);
  }

  async create(solution: Solution, sequences: readonly ReferenceChange[]): Promise<void> {
    await this.#writes.create(solution, sequences);
  }

  async update(previous: Solution, next: Solution, sequences: readonly ReferenceChange[]): Promise<void> {
    await this.#writes.update(previous, next, sequences);
  }

  async delete(solution: Solution, sequences: readonly ReferenceChange[]): Promise<void> {
    await this.#writes.delete(solution, sequences);
  }
}
