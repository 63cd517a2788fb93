// EnvironmentRepository on the single table: the environment item (with a `refCount` of the freezes that name
// it), a claim on its lower-cased name within its tenant scope, a short-id alias and, for a tenant's
// environment, one reference on the tenant, all in one transaction.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import type { EnvironmentRef } from '../../domain/shared/lookups.js';
import type { EnvironmentRepository } from '../../domain/tenancy/ports.js';
import type { Environment } from '../../domain/tenancy/types.js';
import { aliasItem } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition } from './records.js';
import { failedAt, referenceItem, referencesOf, tenantReference, type TransactItem } from './transactions.js';

const toEnvironment = (item: Record<string, unknown>): Environment => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  tenantId: (item['tenantId'] as string | null | undefined) ?? null,
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

/** The transaction item that adds (+1) or removes (-1) one reference to an environment; adding fails when it does not exist. */
export const environmentReference = (tableName: string, environmentId: string, delta: 1 | -1): TransactItem =>
  referenceItem(tableName, keys.environment(environmentId), delta);

export class DynamoEnvironmentRepository implements EnvironmentRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findEnvironment(idOrShortId: string): Promise<EnvironmentRef | undefined> {
    const environment = await this.get(idOrShortId);
    return environment === undefined
      ? undefined
      : { id: environment.id, shortId: environment.shortId, name: environment.name, tenantId: environment.tenantId };
  }

  async listAll(): Promise<readonly Environment[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.environments, toEnvironment);
  }

  async get(idOrShortId: string): Promise<Environment | undefined> {
    return findRecord(this.db, this.tableName, 'environment', keys.environment, idOrShortId, toEnvironment);
  }

  async create(environment: Environment): Promise<void> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: {
            ...keys.environment(environment.id),
            ...keys.environmentsIndex(environment.createdAt, environment.id),
            type: 'environment',
            ...environment,
            refCount: 0,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      this.#claim(environment),
      {
        Put: {
          TableName: this.tableName,
          Item: aliasItem('environment', environment.shortId, environment.id),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      ...(environment.tenantId === null ? [] : [tenantReference(this.tableName, environment.tenantId, 1)]),
    ];
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (failedAt(error, 1)) throw this.#nameTaken(environment);
      if (failedAt(error, 3))
        throw ValidationError.field('tenant_id', `Tenant '${environment.tenantId}' does not exist.`);
      throw new ConflictError('The environment could not be created; try again.');
    }
  }

  async update(previous: Environment, next: Environment): Promise<void> {
    const renamed = previous.name.toLowerCase() !== next.name.toLowerCase();
    const items: TransactItem[] = [
      {
        // An Update, not a Put: `refCount` changes without touching updatedAt and must be kept.
        Update: {
          TableName: this.tableName,
          Key: keys.environment(previous.id),
          UpdateExpression: 'SET #name = :name, updatedAt = :now',
          ConditionExpression: 'updatedAt = :seen',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': next.name, ':now': next.updatedAt, ':seen': previous.updatedAt },
        },
      },
      ...(renamed
        ? [
            this.#claim(next),
            { Delete: { TableName: this.tableName, Key: keys.environmentName(previous.tenantId, previous.name) } },
          ]
        : []),
    ];
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (renamed && failedAt(error, 1)) throw this.#nameTaken(next);
      throw new ConflictError('The environment changed meanwhile; read it again and retry.');
    }
  }

  async delete(environment: Environment): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: keys.environment(environment.id),
                ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(refCount) OR refCount = :zero)',
                ExpressionAttributeValues: { ':zero': 0 },
              },
            },
            {
              Delete: { TableName: this.tableName, Key: keys.environmentName(environment.tenantId, environment.name) },
            },
            { Delete: { TableName: this.tableName, Key: keys.shortId('environment', environment.shortId) } },
            ...(environment.tenantId === null ? [] : [tenantReference(this.tableName, environment.tenantId, -1)]),
          ],
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const references = await referencesOf(this.db, this.tableName, keys.environment(environment.id));
      if (references === undefined) throw new NotFoundError('Environment', environment.id);
      throw new ConflictError(
        `Environment '${environment.name}' is still named by deployment freezes; delete them first.`,
        { references },
      );
    }
  }

  #claim(environment: Environment): TransactItem {
    return {
      Put: {
        TableName: this.tableName,
        Item: { ...keys.environmentName(environment.tenantId, environment.name), environment_id: environment.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  #nameTaken(environment: Environment): ConflictError {
    const scope = environment.tenantId === null ? 'among global environments' : 'in this tenant';
    return new ConflictError(`An environment named '${environment.name}' already exists ${scope}.`, { field: 'name' });
  }
}
