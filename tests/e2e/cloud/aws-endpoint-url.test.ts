// The LocalStack path (README, "LocalStack"): with AWS_ENDPOINT_URL set, the stack starts no emulator and every
// adapter (the tables' creation, the functions' DynamoDB and SQS clients) talks to that one endpoint. Here the
// endpoint is a proxy that is not the stack's own, in front of the emulators, routing by the request as LocalStack
// does on its single port: DynamoDB's `x-amz-target: DynamoDB_20120810.*`, everything else to SQS. The test shows
// the service works through it and that both services' calls went through it (none around it).
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSqs, type Emulator } from '../../../local/emulators.js';
import { startStack, type Stack } from '../../../local/stack.js';
import { uniqueName } from '../../support/aws.js';
import { apiClient } from '../../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const seen = { dynamodb: 0, sqs: 0 };
/** The SQS actions the endpoint saw, in order (the pollers' receives among them). */
const sqsActions: string[] = [];
let sqs: Emulator;
let proxy: Server;
let stack: Stack;
const api = apiClient(() => stack.baseUrl);

/** One endpoint for both services, like LocalStack's port 4566. */
const startProxy = (dynamo: string, sqsEndpoint: string): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer((req, res) => {
      const toDynamo = String(req.headers['x-amz-target'] ?? '').startsWith('DynamoDB'); // also DynamoDBStreams_*
      seen[toDynamo ? 'dynamodb' : 'sqs'] += 1;
      if (!toDynamo) sqsActions.push(String(req.headers['x-amz-target'] ?? ''));
      const target = new URL(req.url ?? '/', toDynamo ? dynamo : sqsEndpoint);
      const forward = httpRequest(
        target,
        { method: req.method, headers: { ...req.headers, host: target.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });

beforeAll(async () => {
  const dynamo = process.env['DEPLOYER_DYNAMODB_ENDPOINT'];
  if (dynamo === undefined) throw new Error('the test run starts a DynamoDB emulator (tests/support/global-setup.ts)');
  sqs = await startSqs({ port: 0 });
  proxy = await startProxy(dynamo, sqs.endpoint);
  const address = proxy.address();
  process.env['AWS_ENDPOINT_URL'] = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  try {
    stack = await startStack({ port: 0, namePrefix: `${uniqueName('endpoint')}-`, bootstrapAdmin: ADMIN });
  } finally {
    delete process.env['AWS_ENDPOINT_URL'];
  }
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
  await sqs?.stop();
});

describe('AWS_ENDPOINT_URL (the LocalStack path) through an endpoint that is not the stack’s own', () => {
  it('creates the tables and queues through it, and serves logins and writes with both services behind it', async () => {
    const startup = { ...seen };
    expect(startup.dynamodb, 'tables created through the endpoint').toBeGreaterThan(0);
    expect(startup.sqs, 'queues created through the endpoint').toBeGreaterThan(0);

    const { token } = await api.login(ADMIN);
    const created = await api.call('POST', '/api/v1/tenants', {
      token,
      body: { name: 'Via proxy', slug: 'via-proxy' },
    });
    expect(created.status).toBe(201);
    const read = await api.call('GET', `/api/v1/tenants/${created.json.id as string}`, { token });
    expect(read.json).toMatchObject({ name: 'Via proxy', slug: 'via-proxy' });
    // The readiness probe reads the table and the dispatch queue (GetQueueAttributes, which the stack's queue
    // pollers never send: their receives through the endpoint cannot stand in for the handler's call).
    const attributesBefore = sqsActions.filter((a) => a.endsWith('.GetQueueAttributes')).length;
    const ready = await api.call('GET', '/api/v1/health/ready');
    expect(ready.status).toBe(200);
    expect(seen.dynamodb).toBeGreaterThan(startup.dynamodb);
    expect(sqsActions.filter((a) => a.endsWith('.GetQueueAttributes')).length).toBe(attributesBefore + 1);
  });
});
