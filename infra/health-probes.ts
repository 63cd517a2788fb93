// DependencyProbe adapters: one cheap data-plane call each, bounded by a timeout so health never hangs.
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DependencyProbe } from '../domain/health/check-health.js';
import { keys } from './dynamodb/keys.js';

const PROBE_TIMEOUT_MS = 2_000;

export const dynamoProbe = (db: DynamoDBDocumentClient, tableName: string): DependencyProbe => ({
  name: 'dynamodb',
  check: async () => {
    await db.send(new GetCommand({ TableName: tableName, Key: keys.probe() }), {
      abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  },
});

export const sqsProbe = (sqs: SQSClient, queueUrl: string): DependencyProbe => ({
  name: 'sqs',
  check: async () => {
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }), {
      abortSignal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
  },
});
