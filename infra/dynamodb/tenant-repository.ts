// TenantRepository on the single table: the tenant item (with a `refCount` of the records that reference it),
// a claim on its lower-cased slug and a short-id alias, written in one transaction. Records that reference a
// tenant add `tenantReference(...)` to their own transaction, so a tenant cannot be deleted while referenced
// (the delete is conditioned on `refCount = 0`) and a record cannot reference a tenant deleted meanwhile.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import type { TenantRef } from '../../domain/shared/lookups.js';
import type { TenantRepository } from '../../domain/tenancy/ports.js';
import type { Tenant } from '../../domain/tenancy/types.js';
import { aliasItem } from './aliases.js';
import { isConditionFailure } from './conditional.js';
import { keys, partitions } from './keys.js';
import { findRecord, listPartition } from './records.js';
import { failedAt, referencesOf, type TransactItem } from './transactions.js';

const toTenant = (item: Record<string, unknown>): Tenant => ({
  id: String(item['id']),
  shortId: String(item['shortId']),
  name: String(item['name']),
  slug: String(item['slug']),
  createdAt: String(item['createdAt']),
  updatedAt: String(item['updatedAt']),
});

export class DynamoTenantRepository implements TenantRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async findTenant(idOrShortId: string): Promise<TenantRef | undefined> {
    const tenant = await this.get(idOrShortId);
    return tenant === undefined
      ? undefined
      : { id: tenant.id, shortId: tenant.shortId, name: tenant.name, slug: tenant.slug };
  }

  async listAll(): Promise<readonly Tenant[]> {
    return listPartition(this.db, this.tableName, 'gsi1', partitions.tenants, toTenant);
  }

  async get(idOrShortId: string): Promise<Tenant | undefined> {
    return findRecord(this.db, this.tableName, 'tenant', keys.tenant, idOrShortId, toTenant);
  }

  async create(tenant: Tenant): Promise<void> {
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.tableName,
          Item: {
            ...keys.tenant(tenant.id),
            ...keys.tenantsIndex(tenant.createdAt, tenant.id),
            type: 'tenant',
            ...tenant,
            refCount: 0,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      this.#claim(tenant),
      {
        Put: {
          TableName: this.tableName,
          Item: aliasItem('tenant', tenant.shortId, tenant.id),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ];
    await this.#write(items, tenant.slug, 1);
  }

  async update(previous: Tenant, next: Tenant): Promise<void> {
    const moved = previous.slug.toLowerCase() !== next.slug.toLowerCase();
    const items: TransactItem[] = [
      {
        // An Update, not a Put: `refCount` changes without touching updatedAt and must be kept.
        Update: {
          TableName: this.tableName,
          Key: keys.tenant(previous.id),
          UpdateExpression: 'SET #name = :name, slug = :slug, updatedAt = :now',
          ConditionExpression: 'updatedAt = :seen',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':name': next.name,
            ':slug': next.slug,
            ':now': next.updatedAt,
            ':seen': previous.updatedAt,
          },
        },
      },
      ...(moved
        ? [this.#claim(next), { Delete: { TableName: this.tableName, Key: keys.tenantSlug(previous.slug) } }]
        : []),
    ];
    await this.#write(items, next.slug, moved ? 1 : -1);
  }

  async delete(tenant: Tenant): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: keys.tenant(tenant.id),
                ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(refCount) OR refCount = :zero)',
                ExpressionAttributeValues: { ':zero': 0 },
              },
            },
            { Delete: { TableName: this.tableName, Key: keys.tenantSlug(tenant.slug) } },
            { Delete: { TableName: this.tableName, Key: keys.shortId('tenant', tenant.shortId) } },
          ],
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const references = await referencesOf(this.db, this.tableName, keys.tenant(tenant.id));
      if (references === undefined) throw new NotFoundError('Tenant', tenant.id);
      throw new ConflictError(
        `Tenant '${tenant.slug}' is still referenced by users, environments, catalog entries or deployment freezes; remove them first.`,
        { references },
      );
    }
  }

  #claim(tenant: Tenant): TransactItem {
    return {
      Put: {
        TableName: this.tableName,
        Item: { ...keys.tenantSlug(tenant.slug), tenant_id: tenant.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
  }

  /** Runs the transaction; the claim (at `claimIndex`, -1 for none) failing is a taken slug, anything else a race. */
  async #write(items: TransactItem[], slug: string, claimIndex: number): Promise<void> {
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (claimIndex >= 0 && failedAt(error, claimIndex))
        throw new ConflictError(`A tenant with slug '${slug}' already exists.`, { field: 'slug' });
      throw new ConflictError('The tenant changed meanwhile; read it again and retry.');
    }
  }
}
