import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { ensureQueues, ensureTables } from '../../../local/bootstrap.js';
import type { QueueDefinition, TableDefinition } from '../../../local/service-definition.js';
import { dynamoClient, sqsClient, uniqueName } from '../../support/aws.js';

const table = (gsis: string[]): TableDefinition => ({
  logicalId: 'MainTable',
  name: 'ignored',
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    ...gsis.flatMap((g) => [
      { AttributeName: `${g}pk`, AttributeType: 'S' as const },
      { AttributeName: `${g}sk`, AttributeType: 'S' as const },
    ]),
  ],
  keySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  globalSecondaryIndexes: gsis.map((g) => ({
    IndexName: g,
    KeySchema: [
      { AttributeName: `${g}pk`, KeyType: 'HASH' as const },
      { AttributeName: `${g}sk`, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  })),
  ttlAttribute: 'ttl',
});

describe('ensureTables', () => {
  it('creates a table with its indexes and TTL, is idempotent, and adds indexes defined later', async () => {
    // Prepare
    const client = dynamoClient();
    const name = uniqueName('table');
    // Act
    await ensureTables(client, [table(['gsi1'])], () => name);
    await ensureTables(client, [table(['gsi1'])], () => name);
    await ensureTables(client, [table(['gsi1', 'gsi2'])], () => name);
    // Assess
    const described = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(described.Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['gsi1', 'gsi2']);
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'ttl', TimeToLiveStatus: 'ENABLED' });
  });
});

describe('ensureQueues', () => {
  it('creates the dead-letter queue first and wires the redrive policy, idempotently', async () => {
    // Prepare
    const client = sqsClient();
    const prefix = uniqueName('q');
    const queues: QueueDefinition[] = [
      {
        logicalId: 'Work',
        name: 'work',
        attributes: { VisibilityTimeout: '7' },
        deadLetter: { logicalId: 'WorkDlq', maxReceiveCount: 3 },
      },
      { logicalId: 'WorkDlq', name: 'work-dlq', attributes: {}, deadLetter: undefined },
    ];
    // Act
    const first = await ensureQueues(client, queues, (q) => `${prefix}-${q.name}`);
    const second = await ensureQueues(client, queues, (q) => `${prefix}-${q.name}`);
    // Assess
    expect(second).toEqual(first);
    const attributes = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: first['Work']!.url, AttributeNames: ['All'] }),
    );
    expect(attributes.Attributes?.['VisibilityTimeout']).toBe('7');
    expect(JSON.parse(attributes.Attributes?.['RedrivePolicy'] ?? '{}')).toEqual({
      deadLetterTargetArn: first['WorkDlq']!.arn,
      maxReceiveCount: 3,
    });
  });
});
