// TokenRevocations: one item per revoked access token (its jti), expiring (TTL) when the token would have; a check
// is one strongly consistent read.
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TokenRevocations } from '../../domain/oauth/ports.js';
import { keys } from './keys.js';
import { getRecord } from './records.js';

export class DynamoTokenRevocations implements TokenRevocations {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async revoke(tokenId: string, expiresAtSeconds: number): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.oauthRevoked(tokenId), type: 'oauth_revoked', ttl: expiresAtSeconds + 60 },
      }),
    );
  }

  async isRevoked(tokenId: string): Promise<boolean> {
    return (await getRecord(this.db, this.tableName, keys.oauthRevoked(tokenId), () => true)) ?? false;
  }
}
