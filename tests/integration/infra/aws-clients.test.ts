import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { DatabaseError, ServiceUnavailableError } from '../../../domain/errors.js';
import { makeDynamoClient, makeSqsClient } from '../../../infra/aws-clients.js';
import { dynamoProbe, sqsProbe } from '../../../infra/health-probes.js';
import { freePort } from '../../../local/ports.js';
import { createTestTable, dynamoClient, sqsClient, uniqueName } from '../../support/aws.js';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';

const table = uniqueName('clients');
let queueUrl = '';

/** Runs `body` with an SDK endpoint variable set: the SDK reads it at the first request, not at construction. */
const withEndpoint = async <T>(variable: string, endpoint: string, body: () => Promise<T>): Promise<T> => {
  const previous = process.env[variable];
  process.env[variable] = endpoint;
  try {
    return await body();
  } finally {
    if (previous === undefined) delete process.env[variable];
    else process.env[variable] = previous;
  }
};

beforeAll(async () => {
  const client = dynamoClient();
  await createTestTable(client, table);
  queueUrl = (await sqsClient().send(new CreateQueueCommand({ QueueName: uniqueName('clients') }))).QueueUrl!;
});

const DYNAMO = 'AWS_ENDPOINT_URL_DYNAMODB';
const SQS = 'AWS_ENDPOINT_URL_SQS';

describe('AWS clients (endpoints from the SDK variables)', () => {
  it('reach the emulators through AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS', async () => {
    await withEndpoint(DYNAMO, inject('dynamoEndpoint'), async () => {
      const db = makeDynamoClient({ AWS_REGION: 'us-east-1' });
      await db.send(new PutCommand({ TableName: table, Item: { pk: 'a', sk: 'b', value: 1 } }));
      expect((await db.send(new GetCommand({ TableName: table, Key: { pk: 'a', sk: 'b' } }))).Item).toEqual({
        pk: 'a',
        sk: 'b',
        value: 1,
      });
      await expect(dynamoProbe(db, table).check()).resolves.toBeUndefined();
    });
    await withEndpoint(SQS, inject('sqsEndpoint'), async () => {
      await expect(sqsProbe(makeSqsClient({ AWS_REGION: 'us-east-1' }), queueUrl).check()).resolves.toBeUndefined();
    });
  });

  it('let conditional-write failures through for repositories to handle', async () => {
    await withEndpoint(DYNAMO, inject('dynamoEndpoint'), async () => {
      const db = makeDynamoClient({ AWS_REGION: 'us-east-1' });
      const put = () =>
        db.send(
          new PutCommand({
            TableName: table,
            Item: { pk: 'once', sk: 'x' },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      await put();
      await expect(put()).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    });
  });

  it('turn an unreachable database into DATABASE_CONNECTION_ERROR and a failed probe', async () => {
    await withEndpoint(DYNAMO, `http://127.0.0.1:${await freePort()}`, async () => {
      const db = makeDynamoClient({ AWS_REGION: 'us-east-1' });
      const read = db.send(new GetCommand({ TableName: table, Key: { pk: 'a', sk: 'b' } }));
      await expect(read).rejects.toBeInstanceOf(DatabaseError);
      await expect(read).rejects.toMatchObject({ code: 'DATABASE_CONNECTION_ERROR' });
      const started = Date.now();
      await expect(dynamoProbe(db, table).check()).rejects.toBeDefined();
      expect(Date.now() - started).toBeLessThan(3_000);
    });
  });

  it('turn a malformed request into DATABASE_ERROR', async () => {
    await withEndpoint(DYNAMO, inject('dynamoEndpoint'), async () => {
      const db = makeDynamoClient({ AWS_REGION: 'us-east-1' });
      await expect(db.send(new PutCommand({ TableName: table, Item: { nokey: 1 } }))).rejects.toMatchObject({
        code: 'DATABASE_ERROR',
      });
    });
  });

  it('turn an unreachable queue into SERVICE_UNAVAILABLE and a failed probe', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    await withEndpoint(SQS, dead, async () => {
      const sqs = makeSqsClient({ AWS_REGION: 'us-east-1' });
      await expect(sqsProbe(sqs, `${dead}/000000000000/q`).check()).rejects.toBeInstanceOf(ServiceUnavailableError);
    });
  });
});
