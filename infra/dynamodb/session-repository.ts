// SessionRepository: refresh tokens by hash (the token itself is never stored), their families, and rotation as
// one transaction: the old token is marked rotated only if it was not already, and its successor is stored.
import { GetCommand, PutCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SessionRepository } from '../../domain/identity/ports.js';
import type { RefreshSession } from '../../domain/identity/types.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';

const ttlOf = (epochMs: number) => Math.ceil(epochMs / 1000) + 86_400; // kept a day past expiry for reuse detection

export class DynamoSessionRepository implements SessionRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  #item(session: RefreshSession) {
    return {
      ...keys.refreshToken(session.tokenHash),
      type: 'refresh_token',
      ...session,
      rotated: false,
      ttl: ttlOf(session.expiresAt),
    };
  }

  async create(session: RefreshSession): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: this.#item(session),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async find(tokenHash: string) {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.refreshToken(tokenHash), ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const family = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: keys.refreshFamily(String(Item['familyId'])),
        ConsistentRead: true,
      }),
    );
    return {
      tokenHash,
      userId: String(Item['userId']),
      familyId: String(Item['familyId']),
      issuedAt: Number(Item['issuedAt']),
      expiresAt: Number(Item['expiresAt']),
      rotated: Item['rotated'] === true,
      familyRevoked: family.Item !== undefined,
    };
  }

  async rotate(tokenHash: string, next: RefreshSession): Promise<boolean> {
    return conditionally(
      this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.refreshToken(tokenHash),
                UpdateExpression: 'SET rotated = :yes',
                ConditionExpression: 'rotated = :no',
                ExpressionAttributeValues: { ':yes': true, ':no': false },
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: this.#item(next),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      ),
    );
  }

  async revokeFamily(familyId: string, at: Date): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.refreshFamily(familyId),
          type: 'refresh_family',
          revokedAt: at.toISOString(),
          ttl: ttlOf(at.getTime()) + 90 * 86_400,
        },
      }),
    );
  }
}
