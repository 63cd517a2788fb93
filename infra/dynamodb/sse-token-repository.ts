// SseTokenRepository: single-use tokens consumed by a conditional delete (two streams racing with one token:
// exactly one wins), sessions whose refresh token is swapped by a conditional update. TTL removes leftovers.
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import type { SseGrant, SseTokenRepository } from '../../domain/identity/ports.js';
import { whenCondition } from './conditional.js';
import { keys } from './keys.js';

const ttlOf = (at: Date) => Math.ceil(at.getTime() / 1000) + 3600;

const grantOf = (item: Record<string, unknown>): SseGrant => ({
  kind: item['kind'] === 'api_key' ? 'api_key' : 'user',
  userId: String(item['userId']),
  apiKeyId: (item['apiKeyId'] as string | null) ?? null,
  sessionId: String(item['sessionId']),
  sessionStartedAt: Number(item['sessionStartedAt']),
});

export class DynamoSseTokenRepository implements SseTokenRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async putToken(tokenHash: string, grant: SseGrant, expiresAt: Date): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.sseToken(tokenHash),
          type: 'sse_token',
          ...grant,
          expiresAt: expiresAt.getTime(),
          ttl: ttlOf(expiresAt),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async consumeToken(tokenHash: string, now: Date): Promise<SseGrant | undefined> {
    const deleted = await whenCondition(
      this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.sseToken(tokenHash),
          ConditionExpression: 'attribute_exists(pk) AND expiresAt > :now',
          ExpressionAttributeValues: { ':now': now.getTime() },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return deleted?.Attributes === undefined ? undefined : grantOf(deleted.Attributes);
  }

  async putSession(grant: SseGrant, refreshHash: string, expiresAt: Date): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.sseSession(grant.sessionId),
          type: 'sse_session',
          ...grant,
          refreshHash,
          expiresAt: expiresAt.getTime(),
          ttl: ttlOf(expiresAt),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async rotateSession(
    sessionId: string,
    oldRefreshHash: string,
    newRefreshHash: string,
    now: Date,
  ): Promise<SseGrant | undefined> {
    const updated = await whenCondition(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.sseSession(sessionId),
          UpdateExpression: 'SET refreshHash = :next',
          ConditionExpression: 'refreshHash = :current AND expiresAt > :now',
          ExpressionAttributeValues: { ':next': newRefreshHash, ':current': oldRefreshHash, ':now': now.getTime() },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return updated?.Attributes === undefined ? undefined : grantOf(updated.Attributes);
  }

  async endSession(sessionId: string): Promise<SseGrant | undefined> {
    const { Attributes } = await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: keys.sseSession(sessionId), ReturnValues: 'ALL_OLD' }),
    );
    return Attributes === undefined ? undefined : grantOf(Attributes);
  }

  async sessionExists(sessionId: string): Promise<boolean> {
    const found = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.sseSession(sessionId),
        ProjectionExpression: 'pk',
        ConsistentRead: true,
      }),
    );
    return found.Item !== undefined;
  }
}
