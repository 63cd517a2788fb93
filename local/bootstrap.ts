// Creates the tables and queues of the service definition, idempotently: existing ones are kept (and a table
// gains any index added to serverless.yml since it was created), missing ones are created.
import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
  type StreamViewType,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueDefinition, TableDefinition } from './service-definition.js';

const exists = async (client: DynamoDBClient, name: string) => {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: name }))).Table;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
};

const streamOf = (viewType: string) => ({ StreamEnabled: true, StreamViewType: viewType as StreamViewType });

/** Ensures every table exists; returns logical id -> local table name. */
export const ensureTables = async (
  client: DynamoDBClient,
  tables: readonly TableDefinition[],
  nameOf: (table: TableDefinition) => string = (t) => t.name,
): Promise<Record<string, string>> => {
  const names: Record<string, string> = {};
  for (const table of tables) {
    const name = nameOf(table);
    names[table.logicalId] = name;
    const current = await exists(client, name);
    if (current === undefined) {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [...table.attributeDefinitions],
          KeySchema: [...table.keySchema],
          ...(table.globalSecondaryIndexes.length > 0
            ? { GlobalSecondaryIndexes: [...table.globalSecondaryIndexes] }
            : {}),
          ...(table.streamViewType === undefined ? {} : { StreamSpecification: streamOf(table.streamViewType) }),
        }),
      );
      await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
      if (table.ttlAttribute !== undefined) {
        await client.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
          }),
        );
      }
      continue;
    }
    // A table made before it had a stream (npm start's kept data) gains it.
    if (table.streamViewType !== undefined && current.StreamSpecification?.StreamEnabled !== true)
      await client.send(
        new UpdateTableCommand({ TableName: name, StreamSpecification: streamOf(table.streamViewType) }),
      );
    const present = new Set((current.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    for (const index of table.globalSecondaryIndexes.filter((i) => !present.has(i.IndexName))) {
      await client.send(
        new UpdateTableCommand({
          TableName: name,
          AttributeDefinitions: [...table.attributeDefinitions],
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    }
  }
  return names;
};

export interface LocalQueue {
  readonly url: string;
  readonly arn: string;
}

/** Ensures every queue exists, dead-letter queues first; returns logical id -> local URL and ARN. */
export const ensureQueues = async (
  client: SQSClient,
  queues: readonly QueueDefinition[],
  nameOf: (queue: QueueDefinition) => string = (q) => q.name,
): Promise<Record<string, LocalQueue>> => {
  const created: Record<string, LocalQueue> = {};
  const ordered = [...queues].sort((a, b) => Number(a.deadLetter !== undefined) - Number(b.deadLetter !== undefined));
  for (const queue of ordered) {
    const deadLetter = queue.deadLetter === undefined ? undefined : created[queue.deadLetter.logicalId];
    if (queue.deadLetter !== undefined && deadLetter === undefined) {
      throw new Error(`queue ${queue.logicalId}: dead-letter queue ${queue.deadLetter.logicalId} is not defined`);
    }
    const attributes: Record<string, string> = { ...queue.attributes };
    if (queue.deadLetter !== undefined && deadLetter !== undefined) {
      attributes['RedrivePolicy'] = JSON.stringify({
        deadLetterTargetArn: deadLetter.arn,
        maxReceiveCount: queue.deadLetter.maxReceiveCount,
      });
    }
    const { QueueUrl } = await client.send(
      new CreateQueueCommand({ QueueName: nameOf(queue), Attributes: attributes }),
    );
    if (QueueUrl === undefined) throw new Error(`queue ${queue.logicalId}: no URL returned`);
    const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    created[queue.logicalId] = { url: QueueUrl, arn: Attributes?.['QueueArn'] ?? '' };
  }
  return created;
};
