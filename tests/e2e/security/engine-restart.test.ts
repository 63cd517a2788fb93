// Kill the process between the writes, restart, nothing stuck: a stack on a persistent data directory is left with
// a lost wake-up (a request waiting while an instance is free: the capacity raised behind the service's back, so no
// dispatcher message was ever sent), stopped, and started again on the same data. The sweep of the new process
// dispatches the waiting request without any client call.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../../local/emulators.js';
import { freePort } from '../../../local/ports.js';
import { startStack, type Stack, type StackOptions } from '../../../local/stack.js';
import { uniqueName } from '../../support/aws.js';
import { apiClient } from '../../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack | undefined;
const dirs: string[] = [];
const api = apiClient(() => stack!.baseUrl);

afterAll(async () => {
  await stack?.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('a restart after a lost wake-up', () => {
  it(
    'dispatches the request that waited with an instance free, without any client call',
    { timeout: 240_000 },
    async () => {
      // Prepare: one data dir, one keyring, the same names and ports for both processes (handlers in this process
      // keep the first one's configuration).
      const dataDir = await mkdtemp(join(tmpdir(), 'deployer-restart-data-'));
      const secretsDir = await mkdtemp(join(tmpdir(), 'deployer-restart-secrets-'));
      dirs.push(dataDir, secretsDir);
      const options = {
        port: await freePort(),
        dynamoPort: await freePort(),
        sqsPort: await freePort(),
        dataDir,
        secretsDir,
        namePrefix: `${uniqueName('restart')}-`,
        bootstrapAdmin: ADMIN,
      } satisfies StackOptions;
      stack = await startStack({ ...options, env: { SWEEP_INTERVAL_MS: '600000' } }); // no sweep in the first life
      let token = (await api.login(ADMIN)).token;
      const call = (method: string, path: string, body?: unknown) =>
        api.call(method, `/api/v1${path}`, { token, body });
      const { token: enroll } = (await call('POST', '/targets/enrollment-tokens', {})).json;
      const target = await api.call('POST', '/api/v1/agent/register', {
        body: {
          enrollment_token: enroll,
          name: 'restart-1',
          hostname: 'restart-1',
          os: 'linux',
          arch: 'x64',
          agent_version: '1.0.0',
          tags: [],
        },
      });
      const action = await call('POST', '/actions', {
        slug: 'restart-act',
        name: 'Restart',
        version: { version: '1.0.0', script: 'echo hi' },
      });
      expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
      const queued = await call('POST', '/deployments', {
        action_id: action.json.id,
        target_ids: [target.json.target_id],
      });
      expect([queued.status, queued.json.pending]).toEqual([202, true]);
      const requestId = queued.json.pending_request_id as string;
      // The queueing's own dispatcher wake-up (capacity 0: nothing to do) is handled before the instance frees up:
      // the dispatch queue holds no message, visible or in flight (a fixed pause was too short on a loaded machine).
      const sqs = new SQSClient({ endpoint: stack.sqsEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
      for (let quiet = 0, until = Date.now() + 60_000; quiet < 3 && Date.now() < until;) {
        const { Attributes = {} } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: stack.queues['DispatchQueue']!.url,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        const busy =
          Number(Attributes['ApproximateNumberOfMessages'] ?? 0) +
          Number(Attributes['ApproximateNumberOfMessagesNotVisible'] ?? 0);
        quiet = busy === 0 ? quiet + 1 : 0;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      sqs.destroy();
      // The lost wake-up: an instance becomes free by a write that sends no dispatcher message.
      const db = DynamoDBDocumentClient.from(
        new DynamoDBClient({ endpoint: stack.dynamoEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
      );
      await db.send(
        new PutCommand({
          TableName: stack.tables['MainTable'],
          Item: { pk: 'ORCHESTRATION', sk: 'CONFIG', type: 'orchestration_config', instances: 1 },
        }),
      );
      db.destroy();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const beforeStop = ((await call('GET', '/deployments/pending')).json as { id: string; status: string }[]).find(
        (r) => r.id === requestId,
      );
      // Act: the process goes away and comes back on the same data.
      await stack.stop();
      stack = await startStack({ ...options, env: { SWEEP_INTERVAL_MS: '1000' } });
      token = (await api.login(ADMIN)).token;
      // Assess: it waited before the restart, and the new process dispatches it by itself (reads only from here on).
      expect(beforeStop?.status).toBe('pending');
      const until = Date.now() + 30_000;
      let request: { id: string; status: string; deployment_id?: string } | undefined;
      while (Date.now() < until) {
        request = (
          (await call('GET', '/deployments/pending')).json as { id: string; status: string; deployment_id?: string }[]
        ).find((r) => r.id === requestId);
        if (request?.status === 'dispatched') break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(request).toMatchObject({ status: 'dispatched', deployment_id: expect.any(String) });
    },
  );
});
