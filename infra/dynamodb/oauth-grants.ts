// OAuthGrantStore: authorization codes and refresh tokens, each one item keyed by the hash of its value, expiring
// (TTL) after it can no longer be used. A code is marked used, not deleted, so that a second exchange is seen as a
// reuse; rotation retires a refresh token and stores its successor in one transaction that also checks that the
// grant was not revoked meanwhile.
import { PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuthorizationCode, OAuthGrantStore, RefreshGrant } from '../../domain/oauth/ports.js';
import { conditionally } from './conditional.js';
import { keys } from './keys.js';
import { getRecord, type Item } from './records.js';

/** How long a code is kept past its expiry: a late second exchange is still recognised as a reuse. */
const CODE_KEPT_SECONDS = 600;

const toCode = (item: Item): AuthorizationCode => ({
  codeHash: String(item['codeHash']),
  clientId: String(item['clientId']),
  redirectUri: String(item['redirectUri']),
  userId: String(item['userId']),
  scope: item['scope'] as string[],
  codeChallenge: (item['codeChallenge'] as string | null | undefined) ?? null,
  grantId: String(item['grantId']),
  authTime: Number(item['authTime']),
  expiresAt: Number(item['expiresAt']),
});

const toRefresh = (item: Item): RefreshGrant => ({
  tokenHash: String(item['tokenHash']),
  grantId: String(item['grantId']),
  clientId: String(item['clientId']),
  userId: String(item['userId']),
  scope: item['scope'] as string[],
  authTime: Number(item['authTime']),
  expiresAt: Number(item['expiresAt']),
  status: item['status'] === 'rotated' ? 'rotated' : 'active',
});

const refreshItem = (token: RefreshGrant) => ({
  ...keys.oauthRefresh(token.tokenHash),
  type: 'oauth_refresh',
  ...token,
  scope: [...token.scope],
  ttl: Math.ceil(token.expiresAt / 1000) + 60,
});

export class DynamoOAuthGrantStore implements OAuthGrantStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async saveCode(code: AuthorizationCode): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          ...keys.oauthCode(code.codeHash),
          type: 'oauth_code',
          ...code,
          scope: [...code.scope],
          ttl: Math.ceil(code.expiresAt / 1000) + CODE_KEPT_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  getCode(codeHash: string): Promise<AuthorizationCode | undefined> {
    return getRecord(this.db, this.tableName, keys.oauthCode(codeHash), toCode);
  }

  useCode(codeHash: string): Promise<boolean> {
    return conditionally(
      this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.oauthCode(codeHash),
          UpdateExpression: 'SET usedAt = :now',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(usedAt)',
          ExpressionAttributeValues: { ':now': Date.now() },
        }),
      ),
    );
  }

  async saveRefresh(token: RefreshGrant): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: refreshItem(token),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  getRefresh(tokenHash: string): Promise<RefreshGrant | undefined> {
    return getRecord(this.db, this.tableName, keys.oauthRefresh(tokenHash), toRefresh);
  }

  rotateRefresh(oldHash: string, next: RefreshGrant): Promise<boolean> {
    return conditionally(
      this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.oauthRefresh(oldHash),
                UpdateExpression: 'SET #status = :rotated',
                ConditionExpression: '#status = :active',
                ExpressionAttributeNames: { '#status': 'status' },
                ExpressionAttributeValues: { ':rotated': 'rotated', ':active': 'active' },
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: refreshItem(next),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              ConditionCheck: {
                TableName: this.tableName,
                Key: keys.oauthGrantRevoked(next.grantId),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      ),
    );
  }
}
