// PendingTwoFactorAttempts: one item per pending two-factor token (by the token's hash) counting its code
// attempts and marking its one success. Both are single conditional UpdateItems, so concurrent verifies with one
// token never take more than `max` attempts nor succeed twice. The TTL removes the item once the token expired.
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PendingTwoFactorAttempts } from '../../domain/identity/ports.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';

/** Kept an hour past the token's expiry, for instances whose clocks disagree. */
const ttlOf = (at: Date) => Math.ceil(at.getTime() / 1000) + 3600;

export class DynamoPendingTwoFactorAttempts implements PendingTwoFactorAttempts {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async reserve(tokenHash: string, max: number, expiresAt: Date): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.twoFactorPending(tokenHash),
          UpdateExpression: 'SET #type = :type, #ttl = :ttl ADD attempts :one',
          ConditionExpression: 'attribute_not_exists(used) AND (attribute_not_exists(attempts) OR attempts < :max)',
          ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':type': 'two_factor_pending',
            ':ttl': ttlOf(expiresAt),
            ':one': 1,
            ':max': max,
          },
        }),
      ),
    );
  }

  async consume(tokenHash: string): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.twoFactorPending(tokenHash),
          UpdateExpression: 'SET used = :true',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used)',
          ExpressionAttributeValues: { ':true': true },
        }),
      ),
    );
  }
}
