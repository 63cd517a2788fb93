// CORS with real Origin headers through the local front (the part API Gateway's httpApi.cors plays in the cloud)
// and the functions' own @middy/http-cors: only the configured origins may read answers, with credentials (the
// refresh cookie); a preflight answers 204; an unlisted origin gets no CORS header, on the API and on streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';

const CONSOLE = 'https://console.example.com';
const EVIL = 'https://evil.example.net';
let stack: Stack;

const send = (method: string, path: string, headers: Record<string, string>) =>
  fetch(`${stack.baseUrl}${path}`, { method, headers });

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('cors')}-`,
    env: { CORS_ORIGINS: `${CONSOLE},http://localhost:5173` },
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('CORS', () => {
  it('answers a preflight from a listed origin with 204 and the allowed methods, headers and max age', async () => {
    for (const path of ['/api/v1/deployments', '/api/v1/sse/deployments', '/api/v1/nowhere']) {
      const reply = await send('OPTIONS', path, {
        origin: CONSOLE,
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization, content-type',
      });
      expect([path, reply.status]).toEqual([path, 204]);
      expect(reply.headers.get('access-control-allow-origin')).toBe(CONSOLE);
      expect(reply.headers.get('access-control-allow-credentials')).toBe('true');
      expect(reply.headers.get('access-control-allow-methods')?.split(',')).toEqual(
        expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
      );
      expect(reply.headers.get('access-control-allow-headers')?.split(',')).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'last-event-id']),
      );
      expect(reply.headers.get('access-control-max-age')).toBe('600');
    }
  });

  it('gives an unlisted origin no CORS header, on a preflight and on an answer', async () => {
    const preflight = await send('OPTIONS', '/api/v1/deployments', {
      origin: EVIL,
      'access-control-request-method': 'DELETE',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    for (const path of [
      '/api/v1/health',
      '/api/v1/auth/me',
      '/api/v1/sse/deployments?sse_token=nope',
      '/api/v1/nowhere',
    ]) {
      const reply = await send('GET', path, { origin: EVIL });
      expect([
        path,
        reply.headers.get('access-control-allow-origin'),
        reply.headers.get('access-control-allow-credentials'),
      ]).toEqual([path, null, null]);
    }
  });

  it('lets a listed origin read answers and errors, from the API and the streaming function, with the exposed headers', async () => {
    for (const [path, status] of [
      ['/api/v1/health', 200],
      ['/api/v1/auth/me', 401],
      ['/api/v1/sse/deployments?sse_token=nope', 401],
      ['/api/v1/nowhere', 404],
    ] as const) {
      const reply = await send('GET', path, { origin: 'http://localhost:5173' });
      expect([path, reply.status]).toEqual([path, status]);
      expect(reply.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
      expect(reply.headers.get('access-control-allow-credentials')).toBe('true');
      expect(reply.headers.get('access-control-expose-headers')?.split(',')).toEqual(
        expect.arrayContaining(['x-request-id', 'retry-after']),
      );
      expect(reply.headers.get('vary')?.toLowerCase()).toContain('origin');
    }
  });

  it('sends the security headers on every answer, and the docs page keeps its own policy', async () => {
    const health = await send('GET', '/api/v1/health', {});
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    expect(health.headers.get('x-frame-options')).toBe('DENY');
    expect(health.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(health.headers.get('referrer-policy')).toBe('no-referrer');
    const docs = await send('GET', '/api/v1/docs', {});
    expect(docs.headers.get('content-security-policy')).toContain("style-src 'unsafe-inline'");
  });
});
