// The HTTP fuzz at scale (figures printed): `npm run bench:fuzz [-- --total 10000] [--seed N] [--concurrency 4]`.
// Starts its own in-memory stack (the general rate limit raised: every request comes from one address), signs in as
// the bootstrap admin, makes its own entities for real ids, sends `total` seeded requests over every operation of the
// served openapi.json (tests/support/fuzz.ts), deletes its entities, checks /api/v1/health, and prints the counts
// and every distinct finding with a curl line. Exits 1 when there is a finding or the service is unhealthy after.
import { parseArgs } from 'node:util';
import { startStack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import {
  BAD_OUTCOMES,
  FUZZ_STACK_ENV,
  formatReport,
  operationsOf,
  ownEntities,
  planRequests,
  runFuzz,
} from '../support/fuzz.js';
import { apiClient } from '../support/http.js';
import { runBench } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const { values } = parseArgs({
  options: {
    total: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '21' },
    concurrency: { type: 'string', default: '4' },
  },
});
const total = Number(values.total);
const seed = Number(values.seed);
const concurrency = Number(values.concurrency);
if (!Number.isInteger(total) || total < 1) throw new Error(`--total must be a whole number >= 1 (got ${values.total})`);
if (!Number.isInteger(seed)) throw new Error(`--seed must be a whole number (got ${values.seed})`);
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };

await runBench(async () => {
  const { logger } = await import('../../functions/shared/logger.js');
  logger.setLogLevel('CRITICAL');
  const stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('benchfuzz')}-`,
    bootstrapAdmin: ADMIN,
    env: FUZZ_STACK_ENV,
  });
  try {
    const api = apiClient(() => stack.baseUrl);
    let token = (await api.login(ADMIN)).token;
    const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });
    const own = await ownEntities(call, uniqueName('bench'), (body) =>
      api.call('POST', '/api/v1/agent/register', { body }),
    );
    const operations = operationsOf((await api.call('GET', '/api/v1/openapi.json')).json);
    const requests = planRequests(operations, { total, seed, ids: own.ids });
    console.log(
      `fuzzing ${operations.length} operations with ${total} requests (seed ${seed}, ${concurrency} at a time) at ${stack.baseUrl}`,
    );
    const report = await runFuzz({
      baseUrl: stack.baseUrl,
      login: async () => (token = (await api.login(ADMIN)).token),
      agentToken: own.agentToken,
      requests,
      concurrency,
      timeoutMs: 25_000,
      onProgress: (done, counts) => {
        if (done % 500 === 0)
          console.log(
            `  ${done} / ${total}: ${Object.entries(counts)
              .map(([k, n]) => `${k} ${n}`)
              .join(', ')}`,
          );
      },
    });
    token = (await api.login(ADMIN)).token; // a fuzzed logout may have revoked the last one
    await own.cleanup();
    const health = await api.call('GET', '/api/v1/health');
    console.log(formatReport(report, seed));
    console.log(`health after: ${health.status} ${JSON.stringify(health.json)}`);
    const bad = BAD_OUTCOMES.reduce((sum, outcome) => sum + report.counts[outcome], 0);
    if (bad > 0 || health.status !== 200) throw new Error(`${bad} bad answers; health ${health.status}`);
  } finally {
    await stack.stop();
  }
});
