// The seeded HTTP fuzz over every operation of the served /api/v1/openapi.json (tests/support/fuzz.ts), a few hundred
// requests against the real local stack: no 5xx, no timeout, no answer outside the envelope except the ones
// docs/errors.md lists as the platform's own, and the service healthy afterwards. The fuzzer signs in as the
// bootstrap admin, makes its own tenant, environment and action for real ids, and deletes them after. A second run on
// the same stack aims at the webhook routes only (with a real subscription and delivery in the pool): the general
// run spreads its requests over every operation, this one gives the nine webhook operations a few hundred of their own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import {
  FUZZ_STACK_ENV,
  formatReport,
  operationsOf,
  ownEntities,
  planRequests,
  runFuzz,
  type IdPool,
} from '../support/fuzz.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const SEED = 21;
const TOTAL = 300;
const WEBHOOK_SEED = 18;

let stack: Stack;
let token: string;
let ids: IdPool;
let agentToken: string;
let cleanup: () => Promise<void> = async () => undefined;
const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });
const register = (body: unknown) => api.call('POST', '/api/v1/agent/register', { body });

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('fuzz')}-`,
    bootstrapAdmin: ADMIN,
    env: FUZZ_STACK_ENV,
  });
  token = (await api.login(ADMIN)).token;
  ({ ids, cleanup, agentToken } = await ownEntities(call, uniqueName('e2e'), register));
  const hook = await call('POST', '/webhooks', {
    url: 'https://hooks.example.invalid/fuzz',
    event_types: ['deployment.created'],
  });
  expect(hook.status).toBe(201);
  const ping = await call('POST', `/webhooks/${hook.json.id}/test`);
  expect(ping.status).toBe(202);
  ids = { ...ids, webhooks: [hook.json.id], deliveries: [ping.json.id] };
});

afterAll(async () => {
  await cleanup().catch(() => undefined);
  await stack?.stop();
});

describe('HTTP fuzz over the served OpenAPI document', () => {
  it(`answers ${TOTAL} malformed requests to the webhook routes with no 5xx, no timeout and no unlisted shape`, async () => {
    // Prepare: the webhook operations only (before the general run, which may delete the subscription on purpose)
    const document = await api.call('GET', '/api/v1/openapi.json');
    const operations = operationsOf(document.json).filter((op) => op.path.startsWith('/api/v1/webhooks'));
    expect(operations).toHaveLength(9);
    const requests = planRequests(operations, { total: TOTAL, seed: WEBHOOK_SEED, ids });
    // Act
    const report = await runFuzz({
      baseUrl: stack.baseUrl,
      login: async () => (token = (await api.login(ADMIN)).token),
      agentToken,
      requests,
      timeoutMs: 25_000,
      concurrency: 4,
    });
    // Assess
    const shown = formatReport(report, WEBHOOK_SEED);
    expect(report.counts['5xx'], shown).toBe(0);
    expect(report.counts.timeout, shown).toBe(0);
    expect(report.counts['non-envelope'], shown).toBe(0);
    expect(report.counts['connection error'], shown).toBe(0);
    expect(report.counts['4xx envelope'], shown).toBeGreaterThan(TOTAL / 2);
    expect(report.counts['2xx'], shown).toBeGreaterThan(0);
    expect((await api.call('GET', '/api/v1/health')).status).toBe(200);
    token = (await api.login(ADMIN)).token;
    console.log(shown);
  }, 240_000);

  it(`answers ${TOTAL} malformed requests with no 5xx, no timeout and no unlisted shape, and stays healthy`, async () => {
    // Prepare: every operation of the served document
    const document = await api.call('GET', '/api/v1/openapi.json');
    const operations = operationsOf(document.json);
    expect(operations.length).toBeGreaterThan(80);
    const requests = planRequests(operations, { total: TOTAL, seed: SEED, ids });
    // Act
    const report = await runFuzz({
      baseUrl: stack.baseUrl,
      login: async () => (token = (await api.login(ADMIN)).token),
      agentToken,
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
    const health = await api.call('GET', '/api/v1/health');
    expect(health.status).toBe(200);
    // The store still answers reads and writes (the fuzz may have deleted its own entities, and logged the admin
    // out, on purpose)
    token = (await api.login(ADMIN)).token;
    const tenant = await call('POST', '/tenants', { name: 'After fuzz', slug: `after-fuzz-${SEED}` });
    expect(tenant.status).toBe(201);
    expect((await call('DELETE', `/tenants/${tenant.json.id}`)).status).toBeLessThan(300);
    console.log(shown);
  }, 240_000);
});
