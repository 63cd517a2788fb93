// The general rate limit over HTTP, on a stack with low limits: per client address, shared state, the spec's
// plain-text 429 with Retry-After and X-RateLimit-Remaining: 0, and a client-sent X-Forwarded-For changes nothing.
// Refill arithmetic is tested with controlled time in tests/integration/infra/dynamodb/rate-limiter.test.ts.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';

let stack: Stack;

beforeAll(async () => {
  // One token every 20 s: however slow a loaded machine serves the bursts, at most one refill happens.
  stack = await startStack({ port: 0, env: { RATE_LIMIT_PER_SECOND: '0.05', RATE_LIMIT_BURST: '5' } });
});

afterAll(async () => {
  await stack?.stop();
});

const get = (path: string, localAddress: string, forwardedFor?: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: stack.port,
          path,
          localAddress,
          headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.end();
    },
  );

describe('general rate limit', () => {
  it('lets a burst through, then answers 429 in plain text with Retry-After, per client address', async () => {
    // Prepare: warm both functions (from another address), so cold starts do not spread the bursts out.
    await get('/api/v1/server/info', '127.0.0.9');
    await get('/api/v1/nothing-here', '127.0.0.9');
    // Act: bursts sent at once (burst 5, then a token every 20 s).
    const started = Date.now();
    const burst = await Promise.all(
      Array.from({ length: 9 }, (_, i) => get('/api/v1/server/info', '127.0.0.4', `198.51.100.${i}`)),
    );
    const refills = Math.ceil((Date.now() - started) / 20_000);
    const unknownPaths = await Promise.all(Array.from({ length: 12 }, () => get('/api/v1/nothing-here', '127.0.0.7')));
    const otherAddress = await get('/api/v1/server/info', '127.0.0.5');
    // Assess
    const allowed = burst.filter((r) => r.status === 200).length;
    expect(allowed).toBeGreaterThanOrEqual(5);
    expect(allowed).toBeLessThanOrEqual(5 + refills);
    const refused = burst.find((r) => r.status === 429)!;
    expect(refused.headers['content-type']).toContain('text/plain');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(() => JSON.parse(refused.body)).toThrow();
    expect(unknownPaths.some((r) => r.status === 429)).toBe(true);
    expect(otherAddress.status).toBe(200);
  }, 90_000); // each concurrent request may start a serverless-offline worker: slow on a loaded machine, not wrong
});
