// Clients for the emulators of the global setup, and unique names so test files never share a table or queue.
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, type TranslateConfig } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { DEPLOYMENT_LIST_ATTRIBUTES } from '../../infra/dynamodb/deployment-list-index.js';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';

export const uniqueName = (label: string): string => `test-${label}-${randomUUID().slice(0, 8)}`;

export const dynamoClient = (endpoint = inject('dynamoEndpoint')): DynamoDBClient =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });

export const sqsClient = (endpoint = inject('sqsEndpoint')): SQSClient =>
  new SQSClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });

/** A table with the service's key schema (pk, sk), for tests of one repository or adapter. */
export const createTestTable = async (client: DynamoDBClient, name: string): Promise<void> => {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
};

/** A table with the service's full key schema: pk/sk plus gsi1 and gsi2 (ALL), gsi3, gsi4 and gsi5 (as in resources.yml). */
export const createServiceTable = async (client: DynamoDBClient, name: string): Promise<void> => {
  const index = (n: 1 | 2 | 3 | 4 | 5) => ({
    IndexName: `gsi${n}`,
    KeySchema: [
      { AttributeName: `gsi${n}pk`, KeyType: 'HASH' as const },
      { AttributeName: `gsi${n}sk`, KeyType: 'RANGE' as const },
    ],
    Projection:
      n === 3
        ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: ['tenantId'] }
        : n === 4
          ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: ['encValues'] }
          : n === 5
            ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...DEPLOYMENT_LIST_ATTRIBUTES] }
            : { ProjectionType: 'ALL' as const },
  });
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        'pk',
        'sk',
        'gsi1pk',
        'gsi1sk',
        'gsi2pk',
        'gsi2sk',
        'gsi3pk',
        'gsi3sk',
        'gsi4pk',
        'gsi4sk',
        'gsi5pk',
        'gsi5sk',
      ].map((AttributeName) => ({
        AttributeName,
        AttributeType: 'S' as const,
      })),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [index(1), index(2), index(3), index(4), index(5)],
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
};

/**
 * A repository test's table: a unique name, a client and a document client on it. The test file creates it
 * (`createServiceTable(client, table)`) in its beforeAll.
 */
export const serviceTableFixture = (label: string, translate?: TranslateConfig) => {
  const table = uniqueName(label);
  const client = dynamoClient();
  const db = DynamoDBDocumentClient.from(client, translate);
  /** The `refCount` attribute of the item at `key`, read consistently. */
  const refCountOf = async (key: { pk: string; sk: string }) =>
    (await db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item?.['refCount'];
  return { table, client, db, refCountOf };
};
