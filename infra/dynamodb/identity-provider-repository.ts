// IdentityProviderRepository: one item per provider (by id or short id) with uniqueness claims for its name and its
// issuer within its scope (tenant or GLOBAL), written in one transaction; the admin list on gsi1; role mappings in
// the provider's partition. `linkedUsers` is maintained by the user repository's link and delete transactions, and
// the provider's delete is conditioned on it being 0, so a sign-in linking meanwhile makes the delete answer 409.
import {
  DeleteCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../../domain/errors.js';
import type { RoleMappingReferences } from '../../domain/identity/ports.js';
import type { IdentityProviderRepository } from '../../domain/sso/ports.js';
import type { IdentityProvider, RoleMapping } from '../../domain/sso/types.js';
import { aliasItem } from './aliases.js';
import { encryptionIndex, encryptionIndexUpdate } from './encryption-index.js';
import { keys, type Key, partitions, prefixes } from './keys.js';
import { findRecord, listPartition, stripKeys, type Item } from './records.js';
import { failedAt } from './transactions.js';

const ENTITY = 'identity_provider';

// The item's `type` attribute names the entity (records.ts); the provider's own type is always `oidc`. Providers
// stored before `jitTrustUnverifiedEmail` existed read as not trusting unverified emails.
const toProvider = (item: Item): IdentityProvider => ({
  ...stripKeys<IdentityProvider>(item),
  type: 'oidc',
  jitTrustUnverifiedEmail: item['jitTrustUnverifiedEmail'] === true,
  linkedUsers: Number(item['linkedUsers'] ?? 0),
});
const toMapping = (item: Item): RoleMapping => stripKeys<RoleMapping>(item);

const claimPut = (tableName: string, key: Key, id: string) => ({
  Put: { TableName: tableName, Item: { ...key, id }, ConditionExpression: 'attribute_not_exists(pk)' },
});
const claimDelete = (tableName: string, key: Key) => ({ Delete: { TableName: tableName, Key: key } });

const nameKey = (p: IdentityProvider) => keys.identityProviderName(p.tenantId, p.name);
const issuerKey = (p: IdentityProvider) => keys.identityProviderIssuer(p.tenantId, p.issuer);

/** The stored attributes of a provider: everything but its type and the counter, which only its own updates move. */
const attributesOf = (p: IdentityProvider) => {
  const { linkedUsers: _linkedUsers, type: _type, ...rest } = p;
  return rest;
};

export class DynamoIdentityProviderRepository implements IdentityProviderRepository, RoleMappingReferences {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(provider: IdentityProvider): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: {
                  ...keys.identityProvider(provider.id),
                  ...keys.identityProvidersIndex(provider.createdAt, provider.id),
                  type: ENTITY,
                  ...attributesOf(provider),
                  linkedUsers: 0,
                  ...encryptionIndex(ENTITY, provider, keys.identityProvider(provider.id)),
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            claimPut(this.tableName, nameKey(provider), provider.id),
            claimPut(this.tableName, issuerKey(provider), provider.id),
            {
              Put: {
                TableName: this.tableName,
                Item: aliasItem(ENTITY, provider.shortId, provider.id),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
    } catch (error) {
      throw this.conflict(error, 1, 2);
    }
  }

  get(id: string): Promise<IdentityProvider | undefined> {
    return findRecord(this.db, this.tableName, ENTITY, keys.identityProvider, id, toProvider);
  }

  async list(tenant: string | null | 'all'): Promise<readonly IdentityProvider[]> {
    const all = await listPartition(this.db, this.tableName, 'gsi1', partitions.identityProviders, toProvider);
    return tenant === 'all' ? all : all.filter((p) => p.tenantId === tenant);
  }

  async update(previous: IdentityProvider, next: IdentityProvider): Promise<void> {
    const renamed = previous.name.toLowerCase() !== next.name.toLowerCase();
    const reissued = previous.issuer !== next.issuer;
    const claims = [
      ...(renamed
        ? [claimDelete(this.tableName, nameKey(previous)), claimPut(this.tableName, nameKey(next), next.id)]
        : []),
      ...(reissued
        ? [claimDelete(this.tableName, issuerKey(previous)), claimPut(this.tableName, issuerKey(next), next.id)]
        : []),
    ];
    const { revision: _revision, ...fields } = attributesOf(next);
    const names: Record<string, string> = { '#revision': 'revision' };
    const values: Record<string, unknown> = { ':seen': previous.revision, ':one': 1 };
    const sets: string[] = [];
    for (const [name, value] of Object.entries(fields)) {
      if (name === 'id' || name === 'shortId' || name === 'createdAt') continue;
      names[`#${name}`] = name;
      values[`:${name}`] = value;
      sets.push(`#${name} = :${name}`);
    }
    // The encryption index follows the client secret (a new one may be under another key).
    const index = encryptionIndexUpdate(ENTITY, keys.identityProvider(previous.id), next);
    if (index.set !== undefined) sets.push(index.set);
    Object.assign(values, index.values);
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.identityProvider(previous.id),
                UpdateExpression: `SET ${sets.join(', ')} ADD #revision :one${index.remove === undefined ? '' : ` REMOVE ${index.remove}`}`,
                ConditionExpression: 'attribute_exists(pk) AND #revision = :seen',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
              },
            },
            ...claims,
          ],
        }),
      );
    } catch (error) {
      if (failedAt(error, 0))
        throw new ConflictError('The identity provider changed meanwhile; read it again and retry.');
      const nameAt = renamed ? 2 : -1;
      const issuerAt = reissued ? (renamed ? 4 : 2) : -1;
      throw this.conflict(error, nameAt, issuerAt);
    }
  }

  async delete(provider: IdentityProvider): Promise<void> {
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.tableName,
                Key: keys.identityProvider(provider.id),
                ConditionExpression:
                  'attribute_exists(pk) AND (attribute_not_exists(linkedUsers) OR linkedUsers = :zero)',
                ExpressionAttributeValues: { ':zero': 0 },
              },
            },
            claimDelete(this.tableName, nameKey(provider)),
            claimDelete(this.tableName, issuerKey(provider)),
            claimDelete(this.tableName, keys.shortId(ENTITY, provider.shortId)),
          ],
        }),
      );
    } catch (error) {
      if (failedAt(error, 0))
        throw new ConflictError(
          'Users are linked to this identity provider: disable it instead, or remove them first.',
          {
            reason: 'linked_users',
          },
        );
      throw error;
    }
    for (const mapping of await this.listMappings(provider.id)) await this.deleteMapping(mapping);
  }

  async listMappings(providerId: string): Promise<readonly RoleMapping[]> {
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :mapping)',
        ExpressionAttributeValues: { ':pk': keys.identityProvider(providerId).pk, ':mapping': prefixes.roleMapping },
        ConsistentRead: true,
      }),
    );
    return (Items ?? [])
      .map(toMapping)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async putMapping(mapping: RoleMapping): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.roleMapping(mapping.providerId, mapping.id), type: 'role_mapping', ...mapping },
      }),
    );
  }

  async deleteMapping(mapping: RoleMapping): Promise<void> {
    await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: keys.roleMapping(mapping.providerId, mapping.id) }),
    );
  }

  async renameRole(from: string, to: string | undefined, at: Date): Promise<void> {
    for (const provider of await this.list('all'))
      for (const mapping of await this.listMappings(provider.id)) {
        if (mapping.role !== from) continue;
        if (to === undefined) await this.deleteMapping(mapping);
        else await this.putMapping({ ...mapping, role: to, updatedAt: at.toISOString() });
      }
  }

  /** The 409 of a taken name or issuer (by the index of its claim in the failed transaction), else the error. */
  private conflict(error: unknown, nameAt: number, issuerAt: number): unknown {
    if ((error as Error).name !== 'TransactionCanceledException') return error;
    if (nameAt >= 0 && failedAt(error, nameAt))
      return new ConflictError('An identity provider with this name already exists.', { field: 'name' });
    if (issuerAt >= 0 && failedAt(error, issuerAt))
      return new ConflictError('An identity provider with this issuer already exists.', { field: 'issuer' });
    return new ConflictError('The identity provider could not be saved; try again.');
  }
}

/**
 * The transaction items of one link (+1) or unlink (-1) of a user to a provider's subject: the subject's claim (unique)
 * and the provider's `linkedUsers`. Linking fails the transaction when the subject is claimed or the provider is gone.
 */
export const linkItems = (
  tableName: string,
  link: { providerId: string; subject: string },
  userId: string,
  delta: 1 | -1,
) => [
  delta === 1
    ? {
        Put: {
          TableName: tableName,
          Item: { ...keys.ssoLink(link.providerId, link.subject), type: 'sso_link', user_id: userId },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      }
    : { Delete: { TableName: tableName, Key: keys.ssoLink(link.providerId, link.subject) } },
  {
    Update: {
      TableName: tableName,
      Key: keys.identityProvider(link.providerId),
      UpdateExpression: 'ADD linkedUsers :delta',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':delta': delta },
    },
  },
];
