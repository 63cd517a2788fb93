// A create's hard deadline (issue 34, infra/request-budget.ts), through the fault fixture (tests/support/faults.ts):
// the stack's DynamoDB calls hang (a `timeout` held for a minute, far past the SDK's own 10 s). A create whose calls
// hang before the commit answers a clean 503 with Retry-After well inside the gateway's 29 s and creates nothing; its
// retry with the same Idempotency-Key deploys once. A create whose transaction applied and whose answers then hang
// answers 201 inside the budget, and its retry replays that answer: one deployment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { startFaultyStackWithAgents, type Faults, type FaultyStackWithAgents } from '../support/faults.js';
import { apiClient } from '../support/http.js';
import { ADMIN } from '../support/stack-with-agents.js';

/** Well inside API Gateway's 29 s: the budget's worst case (about 22 s) plus the local stack's own overhead. */
const CEILING_MS = 25_000;
const HANG = { rate: 1, kinds: ['timeout' as const], holdMs: 60_000 };

let stack: Stack;
let faults: Faults;
let token: string;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });

let fixture: FaultyStackWithAgents | undefined;
beforeAll(async () => {
  fixture = await startFaultyStackWithAgents('deadline', ADMIN);
  ({ stack, faults, token } = fixture);
}, 180_000);

afterAll(async () => fixture?.stop());

const timed = async (key: string, body: unknown) => {
  const started = Date.now();
  const answer = await api.call('POST', '/api/v1/deployments', { token, body, headers: { 'idempotency-key': key } });
  return { answer, ms: Date.now() - started };
};

describe('a create under hanging AWS calls', () => {
  it(
    'answers inside the deadline: 503 before the commit (nothing made), 201 after it; each retry deploys once',
    {
      timeout: 170_000,
    },
    async () => {
      // Prepare: an action on local-1 (role=web), online
      const action = await call('POST', '/actions', {
        slug: 'deadline-run',
        name: 'deadline-run',
        version: { version: '1.0.0', script: 'echo ok' },
      });
      expect(action.status).toBe(201);
      await expect
        .poll(
          async () => ((await call('GET', '/targets?limit=100')).json.data as { name: string }[]).map((t) => t.name),
          {
            timeout: 30_000,
          },
        )
        .toContain('local-1');
      const body = { action_id: action.json.id, target_tags: [{ key: 'role', value: 'web' }] };
      const made = async () =>
        ((await call('GET', '/deployments?limit=100')).json.data as { action_id: string }[]).filter(
          (d) => d.action_id === action.json.id,
        ).length;

      // Act 1: every query hangs (the create's reads before its transaction)
      const keyA = `deadline-a-${uniqueName('k')}`;
      faults.dynamodb.set({ ...HANG, operations: ['Query'] });
      const first = await timed(keyA, body);
      faults.set({ rate: 0 });
      // Assess 1: a clean 503 inside the ceiling, nothing made; the retry with the same key deploys once
      console.log(`create with hanging queries: ${first.answer.status} in ${first.ms} ms`);
      expect(first.answer.status).toBe(503);
      expect(first.answer.json.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(first.answer.headers.get('retry-after')).toBe('1');
      expect(first.ms).toBeLessThan(CEILING_MS);
      expect(await made()).toBe(0);
      const retried = await timed(keyA, body);
      expect(retried.answer.status).toBe(201);
      expect(await made()).toBe(1);

      // Act 2: the transaction applies, then its answers (and those of the SDK's retries) hang
      const keyB = `deadline-b-${uniqueName('k')}`;
      faults.dynamodb.set({ ...HANG, operations: ['TransactWriteItems'] });
      const committed = await timed(keyB, body);
      faults.set({ rate: 0 });
      // Assess 2: 201 inside the ceiling; the retry replays it; one more deployment
      console.log(`create whose commit's answer hangs: ${committed.answer.status} in ${committed.ms} ms`);
      expect(committed.answer.status).toBe(201);
      expect(committed.ms).toBeLessThan(CEILING_MS);
      const replay = await timed(keyB, body);
      expect(replay.answer.status).toBe(201);
      expect(replay.answer.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.answer.json.id).toBe(committed.answer.json.id);
      expect(await made()).toBe(2);
    },
  );
});
