// The seeded HTTP fuzz (tests/support/fuzz.ts) aimed at the webhook routes only, with real webhook and delivery ids
// in the pool: no 5xx, no timeout, nothing outside the envelope. The general fuzz spreads its few hundred requests
// over every operation; this one gives the nine webhook operations a few hundred of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { FUZZ_STACK_ENV, formatReport, operationsOf, planRequests, runFuzz, type IdPool } from '../support/fuzz.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const SEED = 18;
const TOTAL = 300;

let stack: Stack;
let token: string;
let ids: IdPool;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('whfz')}-`,
    bootstrapAdmin: ADMIN,
    env: FUZZ_STACK_ENV,
  });
  token = (await api.login(ADMIN)).token;
  const hook = await call('POST', '/webhooks', {
    url: 'https://hooks.example.invalid/fuzz',
    event_types: ['deployment.created'],
  });
  expect(hook.status).toBe(201);
  const ping = await call('POST', `/webhooks/${hook.json.id}/test`);
  expect(ping.status).toBe(202);
  ids = { webhooks: [hook.json.id], deliveries: [ping.json.id] };
});

afterAll(async () => {
  await stack?.stop();
});

describe('HTTP fuzz of the webhook routes', () => {
  it(`answers ${TOTAL} malformed requests with no 5xx, no timeout and no unlisted shape`, async () => {
    // Prepare
    const document = await api.call('GET', '/api/v1/openapi.json');
    const operations = operationsOf(document.json).filter((op) => op.path.startsWith('/api/v1/webhooks'));
    expect(operations).toHaveLength(9);
    const requests = planRequests(operations, { total: TOTAL, seed: SEED, ids });

    // Act
    const report = await runFuzz({
      baseUrl: stack.baseUrl,
      login: async () => (token = (await api.login(ADMIN)).token),
      agentToken: '',
      requests,
      timeoutMs: 25_000,
      concurrency: 4,
    });

    // Assess
    const shown = formatReport(report, SEED);
    expect(report.counts['5xx'], shown).toBe(0);
    expect(report.counts.timeout, shown).toBe(0);
    expect(report.counts['non-envelope'], shown).toBe(0);
    expect(report.counts['connection error'], shown).toBe(0);
    expect(report.counts['4xx envelope'], shown).toBeGreaterThan(TOTAL / 2);
    expect(report.counts['2xx'], shown).toBeGreaterThan(0);
    expect((await api.call('GET', '/api/v1/health')).status).toBe(200);
    console.log(shown);
  }, 240_000);
});
