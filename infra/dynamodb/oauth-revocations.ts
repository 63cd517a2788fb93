// TokenRevocations: one item per revoked access token (its jti) and per revoked grant, each expiring (TTL) when the
// last token it covers would have; a check is one strongly consistent read (a batch of two for a delegated token).
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TokenRevocations } from '../../domain/oauth/ports.js';
import { keys } from './keys.js';
import { getRecord, getRecords } from './records.js';

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

  async revokeGrant(grantId: string, untilSeconds: number): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...keys.oauthGrantRevoked(grantId), type: 'oauth_grant_revoked', ttl: untilSeconds + 60 },
      }),
    );
  }

  async isGrantRevoked(grantId: string): Promise<boolean> {
    return (await getRecord(this.db, this.tableName, keys.oauthGrantRevoked(grantId), () => true)) ?? false;
  }

  async isRevoked(tokenId: string, grantId?: string): Promise<boolean> {
    if (grantId === undefined)
      return (await getRecord(this.db, this.tableName, keys.oauthRevoked(tokenId), () => true)) ?? false;
    const found = await getRecords(
      this.db,
      this.tableName,
      [keys.oauthRevoked(tokenId), keys.oauthGrantRevoked(grantId)],
      () => true,
    );
    return found.length > 0;
  }
}
