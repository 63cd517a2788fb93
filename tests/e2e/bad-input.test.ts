// Malformed requests over HTTP: bodies that are not JSON objects, repeated or array query parameters, oversized
// bodies, and requests the HTTP layer cannot read (bad percent-encoding, junk cookies or content types, headers
// over 16 KB). Each answers at once with the spec's envelope and a 4xx; the service stays healthy.
import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('badinput');
let tenantId: string;

const api = apiClient(() => e2e.stack.baseUrl);
const raw = (method: string, path: string, body: string, token?: string) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

/** A request with exactly these headers (fetch would refuse or rewrite some of them). */
const rawHttp = (path: string, headers: Record<string, string>, method = 'GET', body?: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  new Promise<{ status: number; contentType: string; json: any }>((resolve, reject) => {
    const url = new URL(e2e.stack.baseUrl);
    const req = request({ host: '127.0.0.1', port: url.port, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          json: text === '' ? undefined : JSON.parse(text),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });

const isEnvelope = (json: unknown) =>
  expect(json).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });

beforeAll(async () => {
  tenantId = (await api.call('POST', '/api/v1/tenants', { token: e2e.admin, body: { name: 'Probe', slug: 'probe' } }))
    .json.id;
});

describe('bodies that are not JSON objects', () => {
  const bodies = ['0', 'false', '-0', '0.0', '"x"', '[]', '[{}]', 'null'];
  const routes = (): [string, string, boolean][] => [
    ['POST', '/tenants', true],
    ['PUT', `/tenants/${tenantId}`, true],
    ['PUT', '/admin/orchestration', true],
    ['POST', '/deployments', true],
    ['POST', '/auth/login', false],
  ];

  it('answer 400 VALIDATION_ERROR saying the body must be an object, on every route', async () => {
    for (const [method, path, authenticated] of routes()) {
      for (const body of bodies) {
        // Act
        const reply = await raw(method, path, body, authenticated ? e2e.admin : undefined);
        // Assess
        expect([method, path, body, reply.status]).toEqual([method, path, body, 400]);
        expect(reply.json.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: 'The body must be a JSON object.',
          details: { fields: [{ field: 'body' }] },
        });
      }
    }
    // Nothing changed: the tenant keeps its name, the capacity is what it was
    expect((await api.call('GET', `/api/v1/tenants/${tenantId}`, { token: e2e.admin })).json.name).toBe('Probe');
  });

  it('refuses a body over 8 MiB with 413 and the envelope', async () => {
    const reply = await raw(
      'POST',
      '/tenants',
      JSON.stringify({ name: 'x'.repeat(9 * 1024 * 1024), slug: 'big' }),
      e2e.admin,
    );
    expect(reply.status).toBe(413);
    expect(reply.json.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { limit_bytes: 8 * 1024 * 1024 } });
  });
});

describe('query parameters', () => {
  it('answers 400 at once for an array or repeated parameter where one value is expected', async () => {
    // Prepare: an agent token
    const enrollment = (await api.call('POST', '/api/v1/targets/enrollment-tokens', { token: e2e.admin, body: {} }))
      .json.token as string;
    const registered = await api.call('POST', '/api/v1/agent/register', {
      body: {
        enrollment_token: enrollment,
        name: 'probe',
        hostname: 'probe',
        os: 'linux',
        arch: 'x64',
        agent_version: '1.0.0',
        tags: [],
      },
    });
    const agentToken = registered.json.agent_token as string;
    // Act
    const started = Date.now();
    const array = await api.call('GET', '/api/v1/agent/commands?wait[]=1', { token: agentToken });
    const repeated = await api.call('GET', '/api/v1/agent/commands?wait=1&wait=2', { token: agentToken });
    const list = await api.call('GET', '/api/v1/tenants?limit=1&limit=2', { token: e2e.admin });
    // Assess
    expect(Date.now() - started).toBeLessThan(10_000); // a long poll would hold each for 20 s
    for (const [reply, field] of [
      [array, 'wait'],
      [repeated, 'wait'],
      [list, 'limit'],
    ] as const) {
      expect(reply.status).toBe(400);
      expect(reply.json.error.details.fields).toEqual([expect.objectContaining({ field })]);
    }
  });
});

describe('requests the HTTP layer cannot read', () => {
  it('answers bad percent-encoding, junk cookies and content types, and oversized headers with the envelope', async () => {
    const long = 'a'.repeat(17_000);
    const cases: [string, Record<string, string>, string, number, string?][] = [
      ['/api/v1/actions/%zz', { authorization: `Bearer ${e2e.admin}` }, 'GET', 400],
      ['/api/v1/actions', { authorization: `Bearer ${e2e.admin}`, cookie: ';;=;__proto__=x; a' }, 'GET', 400],
      [
        '/api/v1/tenants',
        { authorization: `Bearer ${e2e.admin}`, 'content-type': 'application/json, text/plain' },
        'POST',
        400,
        '{"name":"a","slug":"a"}',
      ],
      [`/api/v1/actions?x=${long}`, { authorization: `Bearer ${e2e.admin}` }, 'GET', 431],
      ['/api/v1/actions', { authorization: `Bearer ${e2e.admin}`, 'x-long': long }, 'GET', 431],
    ];
    for (const [path, headers, method, status, body] of cases) {
      const reply = await rawHttp(path, headers, method, body);
      expect([path.slice(0, 40), reply.status]).toEqual([path.slice(0, 40), status]);
      expect(reply.contentType).toBe('application/json; charset=utf-8');
      isEnvelope(reply.json);
    }
    // A large error answer of the service itself (compressed for a client that accepts gzip) passes unchanged
    const long404 = await api.call('GET', `/api/v1/${'x'.repeat(3000)}`, { token: e2e.admin });
    expect(long404.status).toBe(404);
    expect(long404.json.error.code).toBe('NOT_FOUND');
    // Assess: still healthy
    expect((await api.call('GET', '/api/v1/health')).status).toBe(200);
  });
});
