// The Idempotency-Key records (functions/shared/idempotency.ts) on the main table, with Powertools' DynamoDB
// persistence layer: pk = keys.idempotencyPartition(user) (its static pk value), sk = its hashed key, the expiry in
// the table's `ttl` attribute (epoch seconds, so DynamoDB deletes a record some time after its 24 h).
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { keys } from './keys.js';

export const dynamoIdempotencyLayer = (client: DynamoDBClient, tableName: string, userId: string) =>
  new DynamoDBPersistenceLayer({
    tableName,
    keyAttr: 'pk',
    sortKeyAttr: 'sk',
    staticPkValue: keys.idempotencyPartition(userId),
    expiryAttr: 'ttl',
    awsSdkV3Client: client,
  });
