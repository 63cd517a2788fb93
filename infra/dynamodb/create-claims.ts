// CreateClaims adapter: a keyed create's claim on its Idempotency-Key is one item (keys.createClaim), put in the same
// transaction as the deployment it starts (orchestration.ts) or the request it queues (pending-request-repository.ts),
// conditioned on no claim holding yet; it expires with the table's `ttl` (epoch seconds), and an expired one that
// DynamoDB has not deleted yet counts as gone.
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CreateClaims } from '../../domain/deployments/ports.js';
import type { ClaimedCreate, CreateClaim } from '../../domain/deployments/types.js';
import { keys } from './keys.js';
import type { TransactItem } from './transactions.js';

const seconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** The claim's transaction item, naming what the create makes; its condition fails while another claim holds. */
export const claimItem = (
  tableName: string,
  claim: CreateClaim,
  made: Omit<ClaimedCreate, 'fingerprint'>,
): TransactItem => ({
  Put: {
    TableName: tableName,
    Item: {
      ...keys.createClaim(claim.scope),
      type: 'create_claim',
      kind: made.kind,
      madeId: made.id,
      fingerprint: claim.fingerprint,
      claimedAt: claim.at.toISOString(),
      ttl: seconds(claim.until),
    },
    ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':now': seconds(claim.at) },
  },
});

export class DynamoCreateClaims implements CreateClaims {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(scope: string, now: Date): Promise<ClaimedCreate | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: keys.createClaim(scope), ConsistentRead: true }),
    );
    if (Item === undefined || Number(Item['ttl']) <= seconds(now)) return undefined;
    return {
      kind: Item['kind'] === 'request' ? 'request' : 'deployment',
      id: String(Item['madeId']),
      fingerprint: String(Item['fingerprint']),
    };
  }
}
