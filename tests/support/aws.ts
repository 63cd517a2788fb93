// Clients for the emulators of the global setup, and unique names so test files never share a table or queue.
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.js';

export const uniqueName = (label: string): string => `test-${label}-${randomUUID().slice(0, 8)}`;

export const dynamoClient = (endpoint = inject('dynamoEndpoint')): DynamoDBClient =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });

export const sqsClient = (endpoint = inject('sqsEndpoint')): SQSClient =>
  new SQSClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
