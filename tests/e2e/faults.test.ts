// Deployments and consumers under injected AWS faults (issue 34), through tests/support/faults.ts: the stack's
// handlers reach DynamoDB and SQS through proxies that fail 30 % of their calls (throttling, 500, a timeout after
// the write applied, a connection reset). Creates are not retried here (Idempotency-Key is another slice): each
// answer is counted. Asserts: every create answers 201/202 or a clean envelope (never a 500 naming internals);
// every accepted deployment ends; nothing ran twice; nothing left running or waiting after the faults stop and a
// sweep; the stack is ready after. Consumers: a batch reports its failures per message, a duplicate delivery changes
// nothing.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import type { Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { startStackWithFaults, type Faults } from '../support/faults.js';
import { apiClient } from '../support/http.js';
import { ADMIN } from '../support/stack-with-agents.js';

const TERMINAL = ['success', 'failed', 'cancelled', 'rolled_back'];
const CREATES = 12;

let stack: Stack;
let faults: Faults;
let agents: readonly LocalAgent[] = [];
let dir: string;
let token: string;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });

const waitFor = async <T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
};

const runs = async (): Promise<string[]> =>
  (await readFile(join(dir, 'runs'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

beforeAll(async () => {
  ({ stack, faults } = await startStackWithFaults({
    port: 0,
    namePrefix: `${uniqueName('faults')}-`,
    bootstrapAdmin: ADMIN,
    env: { SWEEP_INTERVAL_MS: '2000' },
  }));
  token = (await api.login(ADMIN)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-faults-'));
  agents = await startLocalAgents(stack, dir, () => undefined);
}, 180_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  await faults?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('deployments at 30 % injected faults', () => {
  it(
    'every create answers 201/202 or a clean envelope; every accepted one ends, none ran twice, none stuck; ready after',
    { timeout: 150_000 },
    async () => {
      // Prepare: an action that appends its deployment's id to a file, on local-1 (role=web)
      const action = await call('POST', '/actions', {
        slug: 'faults-run',
        name: 'faults-run',
        version: { version: '1.0.0', script: `echo "$DEPLOYER_DEPLOYMENT_ID" >> ${join(dir, 'runs')}` },
      });
      expect(action.status).toBe(201);
      await waitFor(
        'local-1 to be online',
        async () => {
          const targets = (await call('GET', '/targets?limit=100')).json.data as { name: string }[];
          return targets.some((t) => t.name === 'local-1') ? true : undefined;
        },
        30_000,
      );
      // Act: creates two a second while 30 % of the handlers' AWS calls fail; never retried
      faults.set({ rate: 0.3 });
      const answers = await Promise.all(
        Array.from({ length: CREATES }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 500));
          return call('POST', '/deployments', {
            action_id: action.json.id,
            target_tags: [{ key: 'role', value: 'web' }],
          });
        }),
      );
      faults.set({ rate: 0 });
      const injected = faults.summary();
      // Assess: the answers
      const byStatus: Record<number, number> = {};
      for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
      console.log('faults e2e: creates by status', byStatus, 'faults injected', injected.total, {
        dynamodb: injected.dynamodb.faults,
        sqs: injected.sqs.faults,
        applied_then_lost: injected.dynamodb.applied + injected.sqs.applied,
      });
      expect(injected.total).toBeGreaterThan(0);
      const refusals = answers
        .filter((a) => a.status !== 201 && a.status !== 202)
        .map((a) => ({ status: a.status, retryAfter: a.headers.get('retry-after'), body: a.json as unknown }));
      console.log('faults e2e: refusals', JSON.stringify(refusals));
      for (const refusal of refusals) {
        // A refusal is the spec's envelope, a 5xx (the fault is the service's), and says nothing of the internals.
        // (A 500 DATABASE_ERROR after the commit, and a 503 without Retry-After, are the other slice's to remove.)
        expect(refusal.body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
        expect(JSON.stringify(refusal.body)).not.toMatch(/Exception|stack|at [\w.]+ \(|dynamodb|sqs:\/\//i);
        expect([500, 503]).toContain(refusal.status);
      }
      // every accepted one ends (a 202 is dispatched first)
      const accepted = answers.filter((a) => a.status === 201 || a.status === 202);
      const ids = await Promise.all(
        accepted.map((a) =>
          a.status === 201
            ? Promise.resolve(a.json.deployment_id as string)
            : waitFor(
                `request ${a.json.pending_request_id} to be dispatched`,
                async () => {
                  const pending = (await call('GET', '/deployments/pending')).json as {
                    id: string;
                    status: string;
                    deployment_id?: string;
                  }[];
                  const mine = pending.find((p) => p.id === a.json.pending_request_id);
                  return mine?.deployment_id ?? (mine?.status === 'failed' ? `failed:${mine.id}` : undefined);
                },
                90_000,
              ),
        ),
      );
      const deploymentIds = ids.filter((id) => !id.startsWith('failed:'));
      const ended = await Promise.all(
        deploymentIds.map((id) =>
          waitFor(
            `deployment ${id} to end`,
            async () => {
              const d = (await call('GET', `/deployments/${id}`)).json as { state: string };
              return TERMINAL.includes(d.state) ? d.state : undefined;
            },
            90_000,
          ),
        ),
      );
      console.log('faults e2e: accepted', accepted.length, 'ended', ended);
      // nothing ran twice: each deployment's id at most once in the file, and each successful one exactly once
      await new Promise((r) => setTimeout(r, 3_000)); // a sweep or two
      const lines = await runs();
      for (const id of deploymentIds) expect(lines.filter((l) => l === id).length).toBeLessThanOrEqual(1);
      deploymentIds.forEach((id, i) => {
        if (ended[i] === 'success') expect(lines.filter((l) => l === id)).toHaveLength(1);
      });
      expect(new Set(lines).size).toBe(lines.length);
      // nothing stuck: no request waiting or processing, no instance held
      const pending = (await call('GET', '/deployments/pending')).json as { status: string }[];
      expect(pending.filter((p) => p.status === 'pending' || p.status === 'processing')).toEqual([]);
      // healthy after
      expect((await call('GET', '/health/ready')).status).toBe(200);
    },
  );
});

describe('consumers under faults', () => {
  const record = (messageId: string, body: string): SQSEvent['Records'][number] =>
    ({ messageId, body, receiptHandle: messageId, attributes: {}, messageAttributes: {} }) as never;

  it('the orchestrator reports only the failed message of a batch; a duplicate delivery changes nothing', async () => {
    // Prepare: a finished deployment, its record and history
    const { handler } = await import('../../functions/queues/orchestrator-consumer.js');
    const created = await call('POST', '/deployments', {
      action_id: ((await call('GET', '/actions?limit=100')).json.data as { id: string; slug: string }[]).find(
        (a) => a.slug === 'faults-run',
      )?.id,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    expect(created.status).toBe(201);
    const id = created.json.deployment_id as string;
    await waitFor(
      'the deployment to end',
      async () => (TERMINAL.includes((await call('GET', `/deployments/${id}`)).json.state) ? true : undefined),
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1_000)); // its outbox settled
    const before = (await call('GET', `/deployments/${id}`)).json;
    const history = (await call('GET', `/deployments/${id}/logs/history?limit=100`)).json;
    const wake = JSON.stringify({ deployment_id: id, check: false });
    // Act: the same wake-up delivered twice, beside a message that is not JSON (dropped, not retried)
    const duplicate = await handler({
      Records: [record('m1', wake), record('m2', wake), record('m3', 'not json')],
    });
    // and with every DynamoDB read throttled: the failed deployment's messages are reported, the others are not
    faults.set({ rate: 1, kinds: ['throttle'], operations: ['GetItem'] });
    let failing: Awaited<ReturnType<typeof handler>>;
    try {
      failing = await handler({ Records: [record('m4', wake), record('m5', 'not json')] });
    } finally {
      faults.set({ rate: 0 });
    }
    // Assess
    expect(duplicate).toEqual({ batchItemFailures: [] });
    expect(failing).toEqual({ batchItemFailures: [{ itemIdentifier: 'm4' }] });
    expect((await call('GET', `/deployments/${id}`)).json).toEqual(before);
    expect((await call('GET', `/deployments/${id}/logs/history?limit=100`)).json).toEqual(history);
  });
});
