// Attacks on capacity and on the record of what ran, over HTTP against the local stack:
// - a deployment that would run forever (no deployment timeout, `sleep 60`) meets the ceiling
//   (DEPLOYMENT_MAX_SECONDS=5 here) and frees its instance for the request waiting behind it;
// - a poisoned deployment (its stored record corrupted so every engine pass throws) is failed after
//   ENGINE_MAX_FAILED_PASSES (2 here) passes and frees its instance: it does not hold capacity forever;
// - a retried output post after a crash between storing a chunk and its log lines re-adds the lines, once;
// - an oversized output post is refused (100 chunks, 1 MiB, 5000 lines per request).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../../local/emulators.js';
import { apiClient } from '../../support/http.js';
import { useStackWithAgents } from '../../support/stack-with-agents.js';

const e2e = useStackWithAgents('limits', {
  env: { DEPLOYMENT_MAX_SECONDS: '5', ENGINE_MAX_FAILED_PASSES: '2', SWEEP_INTERVAL_MS: '2000' },
});
const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, body?: unknown, token = e2e.admin) =>
  api.call(method, `/api/v1${path}`, { token, body });

let n = 0;
const action = async (script: string): Promise<string> => {
  n += 1;
  const created = await call('POST', '/actions', {
    slug: `limit-${n}`,
    name: `Limit ${n}`,
    version: { version: '1.0.0', script },
  });
  expect(created.status).toBe(201);
  return created.json.id;
};
const web = { target_tags: [{ key: 'role', value: 'web' }] };
const poll = async <T>(
  read: () => Promise<T>,
  done: (value: NoInfer<T>) => boolean,
  withinMs: number,
  what: string,
): Promise<T> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
const deployment = (id: string) => call('GET', `/deployments/${id}`).then((r) => r.json);
const terminal = (d: { state: string }) => ['success', 'failed', 'cancelled', 'rolled_back'].includes(d.state);
const pendingRequest = (id: string) =>
  call('GET', '/deployments/pending').then((r) =>
    (r.json as { id: string; status: string; deployment_id?: string }[]).find((p) => p.id === id),
  );

describe('nothing holds capacity forever', () => {
  it(
    'a deployment without a timeout meets the ceiling: failed saying which limit, instance freed, the next request dispatched',
    { timeout: 90_000 },
    async () => {
      // Prepare: one instance; a deployment that would run for a minute; a request waiting behind it.
      expect((await call('PUT', '/admin/orchestration', { instances: 1 })).status).toBe(200);
      const long = await call('POST', '/deployments', { action_id: await action('sleep 60'), ...web });
      expect(long.status).toBe(201);
      const next = await call('POST', '/deployments', { action_id: await action('echo next'), ...web });
      expect(next.status).toBe(202);
      // Act: nothing; time passes.
      const done = await poll(() => deployment(long.json.deployment_id), terminal, 45_000, 'the long deployment');
      // Assess
      expect(done.state).toBe('failed');
      expect(done.error_message).toContain("reached the service's ceiling of 5 s (DEPLOYMENT_MAX_SECONDS");
      expect(done.plan.steps[0]).toMatchObject({ state: 'failed', exit_code: 124 });
      const request = await poll(
        () => pendingRequest(next.json.pending_request_id),
        (r) => r?.status === 'dispatched',
        20_000,
        'the waiting request',
      );
      expect(request?.deployment_id).toEqual(expect.any(String));
    },
  );

  it(
    'a poisoned deployment (every pass throws) is failed after 2 passes and frees its instance for the next one',
    { timeout: 120_000 },
    async () => {
      // Prepare: one instance, a deployment with its own long timeout (so only the poison can end it), running.
      expect((await call('PUT', '/admin/orchestration', { instances: 1 })).status).toBe(200);
      await poll(
        () => call('GET', '/admin/orchestration').then((r) => r.json.in_use as number),
        (inUse) => inUse === 0,
        30_000,
        'instances in use',
      );
      const poisoned = await call('POST', '/deployments', {
        action_id: await action('sleep 2'),
        ...web,
        deployment_timeout_seconds: 600,
      });
      expect(poisoned.status).toBe(201);
      const id = poisoned.json.deployment_id as string;
      await poll(
        () => deployment(id),
        (d) => d.plan.steps[0].state === 'running',
        20_000,
        'the first step',
      );
      // Act: corrupt its stored record directly in DynamoDB, so every engine pass throws.
      const db = DynamoDBDocumentClient.from(
        new DynamoDBClient({ endpoint: e2e.stack.dynamoEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
      );
      await db.send(
        new UpdateCommand({
          TableName: e2e.stack.tables['MainTable'],
          Key: { pk: `DEPLOYMENT#${id}`, sk: 'DEPLOYMENT' },
          UpdateExpression: 'SET config.targetMode = :broken',
          ExpressionAttributeValues: { ':broken': {} },
        }),
      );
      const next = await call('POST', '/deployments', { action_id: await action('echo after the poison'), ...web });
      expect(next.status).toBe(202);
      // Assess: failed with a generic message, instance freed, the waiting request dispatched.
      // Its config now holds what the service never writes (target_mode {}): outside the OpenAPI document.
      const poisonedRead = () =>
        api.call('GET', `/api/v1/deployments/${id}`, { token: e2e.admin, conform: false }).then((r) => r.json);
      const done = await poll(poisonedRead, terminal, 90_000, 'the poisoned deployment');
      expect(done.state).toBe('failed');
      expect(done.error_message).toMatch(/^The execution engine failed 2 times in a row: /);
      expect(done.error_message).not.toMatch(/TypeError|Cannot read|\n\s+at /);
      const request = await poll(
        () => pendingRequest(next.json.pending_request_id),
        (r) => r?.status === 'dispatched',
        30_000,
        'the waiting request',
      );
      const after = await poll(
        () => deployment(request!.deployment_id!),
        terminal,
        30_000,
        'the deployment after the poison',
      );
      expect(after.state).toBe('success');
    },
  );
});

describe('output is never half-stored', () => {
  /** A target whose "agent" is this test; a running deployment on it, and its command as delivered. */
  const fakeAgentCommand = async () => {
    const { token } = (await call('POST', '/targets/enrollment-tokens', {})).json;
    n += 1;
    const registered = await call(
      'POST',
      '/agent/register',
      {
        enrollment_token: token,
        name: `fake-${n}`,
        hostname: `fake-${n}`,
        os: 'linux',
        arch: 'x64',
        agent_version: '1.0.0',
        tags: [],
      },
      '',
    );
    expect(registered.status).toBe(201);
    const agent = registered.json.agent_token as string;
    expect((await call('PUT', '/admin/orchestration', { instances: 4 })).status).toBe(200);
    const created = await call('POST', '/deployments', {
      action_id: await action('echo hi'),
      target_ids: [registered.json.target_id],
      deployment_timeout_seconds: 600,
    });
    expect(created.status).toBe(201);
    const delivered = await poll(
      () => call('GET', '/agent/commands?wait=2', undefined, agent).then((r) => r.json.commands as { id: string }[]),
      (c) => c.length > 0,
      30_000,
      'the command',
    );
    return { agent, deploymentId: created.json.deployment_id as string, commandId: delivered[0]!.id };
  };

  it(
    'a retried output post after a crash between the chunk and its log lines re-adds the lines; history shows each line once',
    { timeout: 90_000 },
    async () => {
      // Prepare: chunk 0 is stored but its log lines never were (the process died in between).
      const { agent, deploymentId, commandId } = await fakeAgentCommand();
      const { targetsDeps } = await import('../../../functions/shared/targets-wiring.js');
      const commands = targetsDeps().commands;
      const command = (await commands.get(commandId))!;
      const first = { stream: 'stdout', data: 'line a1\nline a2\nline a3\n', seq: 0 } as const;
      await commands.appendOutput(command, [first], new Date());
      // Act: the agent, seeing no answer, retries chunk 0 with chunk 1; then once more.
      const body = { chunks: [first, { stream: 'stderr', data: 'line b1\nline b2\n', seq: 1 }] };
      const retried = await call('POST', `/agent/commands/${commandId}/output`, body, agent);
      const again = await call('POST', `/agent/commands/${commandId}/output`, body, agent);
      // Assess
      expect([retried.status, retried.json.accepted, again.status, again.json.accepted]).toEqual([200, 1, 200, 0]);
      const history = (await call('GET', `/deployments/${deploymentId}/logs/history?limit=100`)).json as {
        event_type: string;
        message: string;
      }[];
      const lines = history.filter((e) => e.event_type === 'log').map((e) => e.message);
      expect(lines).toEqual(['line a1', 'line a2', 'line a3', 'line b1', 'line b2']);
      await call(
        'POST',
        `/agent/commands/${commandId}/complete`,
        { exit_code: 0, started_at: new Date().toISOString(), completed_at: new Date().toISOString() },
        agent,
      );
    },
  );

  it(
    'an oversized output post is refused with 400 naming `chunks`; the largest allowed one is accepted',
    { timeout: 60_000 },
    async () => {
      const { agent, commandId } = await fakeAgentCommand();
      const post = (chunks: unknown[]) => call('POST', `/agent/commands/${commandId}/output`, { chunks }, agent);
      const fieldsOf = (reply: { json: { error?: { code: string; details?: { fields?: { field: string }[] } } } }) => [
        reply.json.error?.code,
        (reply.json.error?.details?.fields ?? []).map((f) => f.field),
      ];
      const tooMany = await post(Array.from({ length: 101 }, (_, seq) => ({ stream: 'stdout', data: 'x', seq })));
      const tooManyLines = await post([{ stream: 'stdout', data: 'x\n'.repeat(5001), seq: 0 }]);
      const tooManyBytes = await post(
        Array.from({ length: 17 }, (_, seq) => ({ stream: 'stdout', data: 'y'.repeat(65_536), seq })),
      );
      expect([tooMany.status, tooManyLines.status, tooManyBytes.status]).toEqual([400, 400, 400]);
      for (const reply of [tooMany, tooManyLines, tooManyBytes])
        expect(fieldsOf(reply)).toEqual(['VALIDATION_ERROR', ['chunks']]);
      const largest = await post([{ stream: 'stdout', data: 'z\n'.repeat(5000), seq: 0 }]);
      expect([largest.status, largest.json.accepted]).toEqual([200, 1]);
    },
  );
});
