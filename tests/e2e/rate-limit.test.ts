// The general rate limit over HTTP, on a stack with low limits: per client address, shared state, the spec's
// plain-text 429 with Retry-After and X-RateLimit-Remaining: 0, and a client-sent X-Forwarded-For changes nothing.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ port: 0, env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '5' } });
});

afterAll(async () => {
  await stack?.stop();
});

const get = (path: string, localAddress: string, forwardedFor?: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: stack.port, path, localAddress, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });

describe('general rate limit', () => {
  it('lets a burst through, then answers 429 in plain text with Retry-After, per client address', async () => {
    // Act
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await get('/api/v1/server/info', '127.0.0.4', `198.51.100.${i}`)).status);
    const refused = await get('/api/v1/health', '127.0.0.4', '198.51.100.99');
    const unknownPath = await get('/api/v1/nothing-here', '127.0.0.4');
    const otherAddress = await get('/api/v1/server/info', '127.0.0.5');
    // Assess
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toContain('text/plain');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(() => JSON.parse(refused.body)).toThrow();
    expect(unknownPath.status).toBe(429);
    expect(otherAddress.status).toBe(200);
  });

  it('refills at the sustained rate', async () => {
    for (let i = 0; i < 6; i += 1) await get('/api/v1/server/info', '127.0.0.6');
    expect((await get('/api/v1/server/info', '127.0.0.6')).status).toBe(429);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await get('/api/v1/server/info', '127.0.0.6')).status).toBe(200);
  });
});
