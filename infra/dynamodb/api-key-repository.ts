// ApiKeyRepository: each key is one item found by the hash of the full key (authentication is one read); a
// user's keys are listed on gsi1 and one key is found by id on gsi2 (looked up again on a miss: index-lag.ts).
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKey, ApiKeyRepository } from '../../domain/identity/ports.js';
import { conditionally } from './conditional.js';
import { findOnGsi2 } from './index-lag.js';
import { keys } from './keys.js';
import { queryAll } from './query-all.js';

const toKey = (item: Record<string, unknown>): ApiKey => ({
  id: String(item['id']),
  userId: String(item['userId']),
  tenantId: (item['tenantId'] as string | null) ?? null,
  name: String(item['name']),
  description: (item['description'] as string | null) ?? null,
  keyPrefix: String(item['keyPrefix']),
  keyHash: String(item['keyHash']),
  scopes: (item['scopes'] as ApiKey['scopes']) ?? [],
  createdAt: String(item['createdAt']),
  expiresAt: (item['expiresAt'] as string | null) ?? null,
  lastUsedAt: (item['lastUsedAt'] as string | null) ?? null,
  lastUsedIp: (item['lastUsedIp'] as string | null) ?? null,
  revokedAt: (item['revokedAt'] as string | null) ?? null,
});

export class DynamoApiKeyRepository implements ApiKeyRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(key: ApiKey): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.apiKeyByHash(key.keyHash),
          ...keys.apiKeysOfUser(key.userId, key.createdAt, key.id),
          ...keys.apiKeyById(key.id),
          type: 'api_key',
          ...key,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async findByHash(keyHash: string): Promise<ApiKey | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.apiKeyByHash(keyHash), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : toKey(Item);
  }

  async listByUser(userId: string): Promise<readonly ApiKey[]> {
    const items = await queryAll(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :user',
      ExpressionAttributeValues: { ':user': keys.apiKeysOfUser(userId, '', '').gsi1pk },
    });
    return items.map(toKey);
  }

  /** Through gsi2: a key created a moment ago may not be there yet, so a miss looks again (index-lag.ts). */
  async get(id: string): Promise<ApiKey | undefined> {
    return findOnGsi2(this.db, this.tableName, keys.apiKeyById(id).gsi2pk, toKey);
  }

  async revoke(key: ApiKey, at: Date): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.apiKeyByHash(key.keyHash),
          UpdateExpression: 'SET revokedAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND revokedAt = :none',
          ExpressionAttributeValues: { ':at': at.toISOString(), ':none': null },
        }),
      ),
    );
  }

  async recordUse(keyHash: string, at: Date, ip: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.apiKeyByHash(keyHash),
        UpdateExpression: 'SET lastUsedAt = :at, lastUsedIp = :ip',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': at.toISOString(), ':ip': ip },
      }),
    );
  }
}
