// FreezeRepository on the single table: the freeze item, a short-id alias and one reference on each of its
// tenant and environment (when set), all in one transaction, so neither can be deleted while the freeze names it.
// The solution is not referenced: a freeze naming a deleted solution simply never matches a deployment again.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { FreezeRepository } from '../../domain/tenancy/ports.js';
import type { Freeze } from '../../domain/tenancy/types.js';
import { aliasItem } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { environmentReference } from './environment-repository.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition, type Filter } from './records.js';
import { failedAt, tenantReference, type TransactItem } from './transactions.js';

const nullable = (value: unknown): string | null => (value === undefined || value === null ? null : String(value));

const toFreeze = (item: Record<string, unknown>): Freeze => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  reason: nullable(item['reason']),
  startTime: String(item['startTime']),
  endTime: String(item['endTime']),
  tenantId: nullable(item['tenantId']),
  solutionId: nullable(item['solutionId']),
  environmentId: nullable(item['environmentId']),
  createdBy: String(item['createdBy']),
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

/** A reference item and the request field to blame when its condition fails. */
interface Reference {
  readonly item: TransactItem;
  readonly field?: 'tenant_id' | 'environment_id';
}

export class DynamoFreezeRepository implements FreezeRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  #item(freeze: Freeze) {
    return { ...keys.freeze(freeze.id), ...keys.freezesIndex(freeze.createdAt, freeze.id), type: 'freeze', ...freeze };
  }

  async listAll(): Promise<readonly Freeze[]> {
    return this.#query();
  }

  async listEndingAfter(at: Date): Promise<readonly Freeze[]> {
    // Times are stored as toISOString() values, so string order is time order.
    return this.#query({ FilterExpression: 'endTime > :at', ExpressionAttributeValues: { ':at': at.toISOString() } });
  }

  async get(idOrShortId: string): Promise<Freeze | undefined> {
    return findRecord(this.db, this.tableName, 'freeze', keys.freeze, idOrShortId, toFreeze);
  }

  async create(freeze: Freeze): Promise<void> {
    const references = this.#references(null, freeze);
    await this.#write(
      [
        {
          Put: { TableName: this.tableName, Item: this.#item(freeze), ConditionExpression: 'attribute_not_exists(pk)' },
        },
        {
          Put: {
            TableName: this.tableName,
            Item: aliasItem('freeze', freeze.shortId, freeze.id),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
      references,
      'The deployment freeze could not be created; try again.',
    );
  }

  async update(previous: Freeze, next: Freeze): Promise<void> {
    await this.#write(
      [
        {
          Put: {
            TableName: this.tableName,
            Item: this.#item(next),
            ConditionExpression: 'updatedAt = :seen',
            ExpressionAttributeValues: { ':seen': previous.updatedAt },
          },
        },
      ],
      this.#references(previous, next),
      'The deployment freeze changed meanwhile; read it again and retry.',
    );
  }

  async delete(freeze: Freeze): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: keys.freeze(freeze.id),
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            { Delete: { TableName: this.tableName, Key: keys.shortId('freeze', freeze.shortId) } },
            ...this.#references(freeze, null).map((r) => r.item),
          ],
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      throw new NotFoundError('Deployment freeze', freeze.id);
    }
  }

  /** The reference changes from `before` to `after` (null: none): -1 on what is no longer named, +1 on what now is. */
  #references(before: Freeze | null, after: Freeze | null): Reference[] {
    const changes: Reference[] = [];
    const pairs = [
      { field: 'tenant_id', old: before?.tenantId ?? null, now: after?.tenantId ?? null, ref: tenantReference },
      {
        field: 'environment_id',
        old: before?.environmentId ?? null,
        now: after?.environmentId ?? null,
        ref: environmentReference,
      },
    ] as const;
    for (const { field, old, now, ref } of pairs) {
      if (old === now) continue;
      if (old !== null) changes.push({ item: ref(this.tableName, old, -1) });
      if (now !== null) changes.push({ item: ref(this.tableName, now, 1), field });
    }
    return changes;
  }

  async #write(items: TransactItem[], references: Reference[], raced: string): Promise<void> {
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: [...items, ...references.map((r) => r.item)] }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const missing = references.find((r, index) => r.field !== undefined && failedAt(error, items.length + index));
      if (missing?.field === 'tenant_id') throw ValidationError.field('tenant_id', 'The tenant does not exist.');
      if (missing?.field === 'environment_id')
        throw ValidationError.field('environment_id', 'The environment does not exist.');
      throw new ConflictError(raced);
    }
  }

  async #query(filter: Filter | undefined = undefined): Promise<Freeze[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.freezes, toFreeze, filter);
  }
}
