// The local stack past its capacity: the front's admission gate (local/admission.ts) answers a burst beyond what
// serverless-offline is given at once with fast 503s carrying Retry-After, keeps a slot for health checks, and the
// stack answers normally right after. The gate's limits are lowered here so that a burst of 80 is far beyond them
// on any machine; the figures at the real limits are bench:overload's.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('overload')}-`,
    admission: { maxInFlight: 2, maxQueued: 4, maxWaitMs: 300, healthSlots: 1 },
    // A burst of 80 from one address goes past this limit (the second test), not the first test's.
    env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '100' },
  });
});

afterAll(async () => {
  await stack?.stop();
});

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly retryAfter: string | undefined;
  readonly body: string;
}

const get = (path: string, localAddress: string) =>
  new Promise<Answer>((resolve, reject) => {
    const started = Date.now();
    const req = httpRequest({ host: '127.0.0.1', port: stack.port, path, localAddress, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: Date.now() - started,
          retryAfter: res.headers['retry-after'],
          body,
        }),
      );
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`${path}: no answer within 10 s`)));
    req.on('error', reject);
    req.end();
  });

describe('the local stack under overload', () => {
  it('answers a burst beyond capacity at once with 503 and Retry-After, still answers health, then serves normally', async () => {
    // Prepare: warm the functions, so the burst meets warm handlers.
    for (const path of ['/api/v1/server/info', '/api/v1/health'])
      expect((await get(path, '127.0.0.40')).status).toBe(200);
    // Act: 80 at once from one address, and a health check in the middle of them
    const burst = Array.from({ length: 80 }, () => get('/api/v1/server/info', '127.0.0.41'));
    const health = await get('/api/v1/health', '127.0.0.42');
    const answers = await Promise.all(burst);
    const after = await get('/api/v1/server/info', '127.0.0.43');
    // Assess
    const shed = answers.filter((a) => a.status === 503);
    expect(answers.every((a) => [200, 429, 503].includes(a.status))).toBe(true);
    expect(shed.length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    for (const refused of answers.filter((a) => a.status !== 200)) expect(refused.retryAfter).toBeDefined();
    expect(shed.every((a) => a.retryAfter === '1')).toBe(true);
    expect(JSON.parse(shed[0]!.body)).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: expect.any(String),
        details: { source: 'gateway', reason: expect.stringMatching(/^queue_(full|timeout)$/) },
      },
    });
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(3_000);
    expect(health.status).toBe(200);
    expect(after.status).toBe(200);
    expect(after.ms).toBeLessThan(3_000);
  }, 60_000);

  it('answers the shed requests of a client over its own rate limit with the service’s 429, not 503', async () => {
    // Act: two bursts of 80 from one address: the second goes past its 100-request burst (1 a second after it).
    const first = await Promise.all(Array.from({ length: 80 }, () => get('/api/v1/server/info', '127.0.0.44')));
    const second = await Promise.all(Array.from({ length: 80 }, () => get('/api/v1/server/info', '127.0.0.44')));
    const other = await get('/api/v1/server/info', '127.0.0.45');
    // Assess: past its limit the client is told to slow down (plain text, Retry-After), whichever gate said it.
    expect(first.filter((a) => a.status === 429)).toEqual([]);
    const limited = second.filter((a) => a.status === 429);
    // 60 of the second burst are over the limit; the few the gate admits reach the service, whose own count (it
    // saw only the first burst's admitted requests) still lets them through.
    expect(limited.length).toBeGreaterThanOrEqual(30);
    expect(second.filter((a) => a.status === 503).length).toBeLessThanOrEqual(25);
    for (const answer of limited) {
      expect(answer.body).toBe('Too Many Requests: slow down and retry after the Retry-After seconds.');
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(Math.max(...second.map((a) => a.ms))).toBeLessThan(3_000);
    expect(other.status).toBe(200);
  }, 60_000);
});
