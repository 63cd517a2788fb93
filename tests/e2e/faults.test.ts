// Deployments and consumers under injected AWS faults (issue 34), through tests/support/faults.ts: the stack's
// handlers reach DynamoDB and SQS through proxies that fail half of their calls (throttling, 500, a timeout after
// the write applied, a connection reset). Each create carries an Idempotency-Key and is retried on a 5xx or 409 as
// a pipeline (and the command line) does. Asserts: every answer is 201/202 or a clean envelope (never a 500 naming
// internals); every key that was accepted ran exactly once, and nothing ran that no answer named (a create that
// committed and then answered 5xx would run twice on its retry); every accepted deployment ends; nothing left
// running or waiting after the faults stop and a sweep; the stack is ready after. A create whose transaction (or
// queued request) applied while its answer was lost answers 201 (202) and stores one deployment (request).
// Consumers (orchestrator, dispatcher, webhooks, analysis): a batch reports its failures per message (the dispatcher: its
// whole batch, one run), a duplicate delivery changes nothing.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analysisRequestIdOf } from '../../domain/analysis/model.js';
import type { Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { startFaultyStackWithAgents, type Faults, type FaultyStackWithAgents } from '../support/faults.js';
import { apiClient, type Reply } from '../support/http.js';
import { ADMIN } from '../support/stack-with-agents.js';

const TERMINAL = ['success', 'failed', 'cancelled', 'rolled_back'];
const CREATES = 12;
const ATTEMPTS = 8;

let stack: Stack;
let faults: Faults;
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

let fixture: FaultyStackWithAgents | undefined;
beforeAll(async () => {
  fixture = await startFaultyStackWithAgents('faults', ADMIN, { SWEEP_INTERVAL_MS: '2000' });
  ({ stack, faults, dir, token } = fixture);
}, 180_000);

afterAll(async () => fixture?.stop());

/** A create as a careful client sends it: one Idempotency-Key, retried on a 5xx or 409 (in flight) with backoff. */
const createWithRetries = async (key: string, body: unknown) => {
  const answers: Reply[] = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const answer = await api.call('POST', '/api/v1/deployments', { token, body, headers: { 'idempotency-key': key } });
    answers.push(answer);
    if (answer.status < 500 && answer.status !== 409) break;
    await new Promise((r) => setTimeout(r, 200 * attempt));
  }
  return answers;
};

describe('deployments at 50 % injected faults', () => {
  it(
    'retried creates: every accepted key ran once, nothing ran that no answer named, none stuck; ready after',
    { timeout: 180_000 },
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
      const before = new Set(await runs());
      // Act: creates two a second while half the handlers' AWS calls fail, each retried with its key
      faults.set({ rate: 0.5 });
      const tries = await Promise.all(
        Array.from({ length: CREATES }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * 500));
          return createWithRetries(`faults-${i}-${uniqueName('k')}`, {
            action_id: action.json.id,
            target_tags: [{ key: 'role', value: 'web' }],
          });
        }),
      );
      faults.set({ rate: 0 });
      const injected = faults.summary();
      // Assess: the answers
      const all = tries.flat();
      const byStatus: Record<number, number> = {};
      for (const a of all) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
      console.log('faults e2e: answers by status', byStatus, 'faults injected', injected.total, {
        dynamodb: injected.dynamodb.faults,
        sqs: injected.sqs.faults,
        applied_then_lost: injected.dynamodb.applied + injected.sqs.applied,
      });
      expect(injected.total).toBeGreaterThan(0);
      const refusals = all
        .filter((a) => a.status !== 201 && a.status !== 202)
        .map((a) => ({ status: a.status, retryAfter: a.headers.get('retry-after'), body: a.json as unknown }));
      for (const refusal of refusals) {
        // A refusal is the spec's envelope, a 5xx (the fault is the service's) or 409 (the key still in flight),
        // and says nothing of the internals.
        expect(refusal.body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
        expect(JSON.stringify(refusal.body)).not.toMatch(/Exception|stack|at [\w.]+ \(|dynamodb|sqs:\/\//i);
        expect([409, 500, 503]).toContain(refusal.status);
      }
      // every accepted one ends (a 202 is dispatched first)
      const accepted = tries.map((t) => t.at(-1)!).filter((a) => a.status === 201 || a.status === 202);
      expect(accepted.length).toBeGreaterThan(0);
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
      // each key's answers in order (a failure below names which key's create ran unanswered)
      console.log(
        'faults e2e: answers per key',
        tries.map((t) => t.map((a) => a.status).join(' ')),
      );
      // nothing ran twice, and nothing ran that no final answer named (a committed create answering 5xx, retried)
      await new Promise((r) => setTimeout(r, 3_000)); // a sweep or two
      const lines = (await runs()).filter((l) => !before.has(l));
      expect(new Set(lines).size).toBe(lines.length);
      expect(lines.filter((id) => !deploymentIds.includes(id))).toEqual([]);
      deploymentIds.forEach((id, i) => {
        if (ended[i] === 'success') expect(lines.filter((l) => l === id)).toHaveLength(1);
      });
      // no committed create answered 5xx (issue 34's "Done when"): every deployment of the action is one an accepted
      // key's final answer named, and a key answered 5xx at any attempt made no deployment beside its answer's
      const made = ((await call('GET', '/deployments?limit=100')).json.data as { id: string; action_id: string }[])
        .filter((d) => d.action_id === action.json.id)
        .map((d) => d.id);
      expect([...made].sort()).toEqual([...deploymentIds].sort());
      const answered5xx = tries.filter((t) => t.some((a) => a.status >= 500));
      console.log('faults e2e: keys answered 5xx at least once', answered5xx.length, 'deployments made', made.length);
      // nothing stuck: no request waiting or processing
      const pending = (await call('GET', '/deployments/pending')).json as { status: string }[];
      expect(pending.filter((p) => p.status === 'pending' || p.status === 'processing')).toEqual([]);
      // healthy after
      expect((await call('GET', '/health/ready')).status).toBe(200);
    },
  );

  it('a create whose write applied while its answer was lost answers 201 (202 when queued) and stores one', async () => {
    // Prepare
    const action = await call('POST', '/actions', {
      slug: 'faults-lost',
      name: 'faults-lost',
      version: { version: '1.0.0', script: 'true' },
    });
    expect(action.status).toBe(201);
    const body = { action_id: action.json.id, target_tags: [{ key: 'role', value: 'web' }] };
    const mine = async () =>
      ((await call('GET', '/deployments?limit=100')).json.data as { action_id: string }[]).filter(
        (d) => d.action_id === action.json.id,
      ).length;
    // Act: every transaction's answer is lost after DynamoDB applied it (the SDK retries, then gives up)
    faults.set({ rate: 1, kinds: ['timeout'], operations: ['TransactWriteItems'], holdMs: 200 });
    const started = await call('POST', '/deployments', body).finally(() => faults.set({ rate: 0 }));
    // Assess
    expect(started.status).toBe(201);
    expect(await mine()).toBe(1);
    // Act: no instance free, every put's answer lost: the queued request is stored once and answered 202
    expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
    faults.set({ rate: 1, kinds: ['timeout'], operations: ['PutItem'], holdMs: 200 });
    const queued = await call('POST', '/deployments', body).finally(() => faults.set({ rate: 0 }));
    // Assess
    expect(queued.status).toBe(202);
    const requests = (await call('GET', '/deployments/pending')).json as { id: string; status: string }[];
    expect(requests.filter((r) => r.status === 'pending').map((r) => r.id)).toEqual([queued.json.pending_request_id]);
    expect((await call('PUT', '/admin/orchestration', { instances: 4 })).status).toBe(200);
  }, 60_000);
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
    // Started at once, or queued behind what the test before left running (then dispatched within seconds).
    expect([201, 202]).toContain(created.status);
    const id =
      created.status === 201
        ? (created.json.deployment_id as string)
        : await waitFor(
            'the queued request to be dispatched',
            async () =>
              ((await call('GET', '/deployments/pending')).json as { id: string; deployment_id?: string }[]).find(
                (r) => r.id === created.json.pending_request_id,
              )?.deployment_id,
            60_000,
          );
    await waitFor(
      'the deployment to end',
      async () => (TERMINAL.includes((await call('GET', `/deployments/${id}`)).json.state) ? true : undefined),
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1_000)); // its outbox settled
    const before = (await call('GET', `/deployments/${id}`)).json;
    const history = (await call('GET', `/deployments/${id}/logs/history?limit=100`)).json;
    const wake = JSON.stringify({ deployment_id: id, check: false });
    // Act: the same wake-up delivered twice, beside a message that is not JSON (failed: to the DLQ after its retries)
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
    expect(duplicate).toEqual({ batchItemFailures: [{ itemIdentifier: 'm3' }] });
    expect(failing).toEqual({ batchItemFailures: [{ itemIdentifier: 'm4' }, { itemIdentifier: 'm5' }] });
    expect((await call('GET', `/deployments/${id}`)).json).toEqual(before);
    expect((await call('GET', `/deployments/${id}/logs/history?limit=100`)).json).toEqual(history);
  });
  it('the dispatcher reports its whole batch when its run fails; duplicate wake-ups dispatch each request once', async () => {
    // Prepare: three requests queued behind capacity 0
    const { handler } = await import('../../functions/queues/dispatch-consumer.js');
    const action = await call('POST', '/actions', {
      slug: 'faults-dispatch',
      name: 'faults-dispatch',
      version: { version: '1.0.0', script: 'true' },
    });
    expect(action.status).toBe(201);
    expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
    const queued = await Promise.all(
      [0, 1, 2].map(() =>
        call('POST', '/deployments', { action_id: action.json.id, target_tags: [{ key: 'role', value: 'web' }] }),
      ),
    );
    expect(queued.map((q) => q.status)).toEqual([202, 202, 202]);
    const wake = JSON.stringify({ reason: 'test' });
    // Act: a run whose queue reads are throttled, then the capacity back and the same wake-up delivered three times
    faults.set({ rate: 1, kinds: ['throttle'], operations: ['Query'] });
    let failing: Awaited<ReturnType<typeof handler>>;
    try {
      failing = await handler({ Records: [record('d1', wake), record('d2', wake)] });
    } finally {
      faults.set({ rate: 0 });
    }
    expect((await call('PUT', '/admin/orchestration', { instances: 4 })).status).toBe(200);
    const duplicates = await Promise.all([
      handler({ Records: [record('d3', wake), record('d4', wake)] }),
      handler({ Records: [record('d5', wake)] }),
    ]);
    // Assess: every message of the failed run comes back; each request became exactly one deployment
    expect(failing).toEqual({ batchItemFailures: [{ itemIdentifier: 'd1' }, { itemIdentifier: 'd2' }] });
    expect(duplicates).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    const ids = queued.map((q) => q.json.pending_request_id as string);
    const dispatched = await waitFor(
      'the three requests to be dispatched',
      async () => {
        const pending = (await call('GET', '/deployments/pending')).json as { id: string; deployment_id?: string }[];
        const mine = pending.filter((p) => ids.includes(p.id) && p.deployment_id !== undefined);
        return mine.length === 3 ? mine.map((p) => p.deployment_id!) : undefined;
      },
      30_000,
    );
    expect(new Set(dispatched).size).toBe(3);
    const deployments = (await call('GET', '/deployments?limit=100')).json.data as { id: string; action_id: string }[];
    expect(
      deployments
        .filter((d) => d.action_id === action.json.id)
        .map((d) => d.id)
        .sort(),
    ).toEqual([...dispatched].sort());
  });

  it('the webhook consumer reports only the failed message; a duplicate event is delivered once', async () => {
    // Prepare: a receiver and a subscription to it
    const received: string[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request
        .on('data', (c: Buffer) => (body += c.toString()))
        .on('end', () => {
          received.push(body);
          response.writeHead(204).end();
        });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { handler } = await import('../../functions/queues/webhook-consumer.js');
      const subscription = await call('POST', '/webhooks', {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        event_types: ['deployment.succeeded'],
      });
      expect(subscription.status).toBe(201);
      const marker = uniqueName('evt');
      const event = (id: string) =>
        JSON.stringify({
          kind: 'event',
          event: {
            id,
            type: 'deployment.succeeded',
            tenantId: null,
            timestamp: new Date().toISOString(),
            data: { id: marker, state: 'success' },
          },
        });
      // Act: an event whose delivery record cannot be written (reported), beside one that is not JSON (reported);
      // then the same event delivered twice in one batch
      faults.set({ rate: 1, kinds: ['throttle'], operations: ['PutItem', 'TransactWriteItems'] });
      let failing: Awaited<ReturnType<typeof handler>>;
      try {
        failing = await handler({ Records: [record('w1', event(`evt_${marker}_1`)), record('w2', 'not json')] });
      } finally {
        faults.set({ rate: 0 });
      }
      const duplicate = await handler({
        Records: [record('w3', event(`evt_${marker}_2`)), record('w4', event(`evt_${marker}_2`))],
      });
      // Assess: the failed one comes back; the duplicate reaches the receiver once
      expect(failing).toEqual({ batchItemFailures: [{ itemIdentifier: 'w1' }, { itemIdentifier: 'w2' }] });
      expect(duplicate).toEqual({ batchItemFailures: [] });
      await waitFor('the delivery', async () => (received.some((b) => b.includes(marker)) ? true : undefined), 30_000);
      await new Promise((r) => setTimeout(r, 3_000)); // a second attempt message, if any, has been handled
      expect(received.filter((b) => b.includes(marker))).toHaveLength(1);
      expect((await call('DELETE', `/webhooks/${subscription.json.id as string}`)).status).toBe(204);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
  it('the analysis consumer reports only the failed message; a duplicate request changes nothing', async () => {
    // Prepare: a failed command with its analysis done
    const { handler } = await import('../../functions/queues/analysis-consumer.js');
    const action = await call('POST', '/actions', {
      slug: 'faults-fail',
      name: 'faults-fail',
      version: { version: '1.0.0', script: 'echo "no such tool" >&2; exit 127' },
    });
    expect(action.status).toBe(201);
    const created = await call('POST', '/deployments', {
      action_id: action.json.id,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    expect(created.status).toBe(201);
    const id = created.json.deployment_id as string;
    const analysed = await waitFor(
      'the failed command to be analysed',
      async () => {
        const results = (await call('GET', `/deployments/${id}/analysis`)).json as {
          id: string;
          analysis?: { analyzed_at: string };
        }[];
        return results[0]?.analysis === undefined ? undefined : results[0];
      },
      60_000,
    );
    const message = JSON.stringify({ request_id: analysisRequestIdOf(analysed.id) });
    // Act: the same request delivered twice beside a message that is not JSON; then with its reads throttled
    const duplicate = await handler({ Records: [record('a1', message), record('a2', message), record('a3', '{')] });
    faults.set({ rate: 1, kinds: ['throttle'], operations: ['GetItem'] });
    let failing: Awaited<ReturnType<typeof handler>>;
    try {
      failing = await handler({ Records: [record('a4', message), record('a5', 'not json')] });
    } finally {
      faults.set({ rate: 0 });
    }
    // Assess
    expect(duplicate).toEqual({ batchItemFailures: [{ itemIdentifier: 'a3' }] });
    expect(failing).toEqual({ batchItemFailures: [{ itemIdentifier: 'a4' }, { itemIdentifier: 'a5' }] });
    expect((await call('GET', `/deployments/${id}/analysis`)).json).toEqual([analysed]);
  });
});
