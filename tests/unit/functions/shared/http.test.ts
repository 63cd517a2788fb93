import * as v from 'valibot';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  ConflictError,
  DatabaseError,
  ExternalServiceError,
  NotFoundError,
  ServiceUnavailableError,
} from '../../../../domain/errors.js';
import { http, MAX_BODY_BYTES, type HttpEndpoint } from '../../../../functions/shared/http.js';
import type { LambdaHttpHandler } from '../../../../functions/shared/shell.js';
import { logger } from '../../../../functions/shared/logger.js';
import { PageQuery } from '../../../../functions/shared/schemas.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { bound } from '../../../fakes/shell.js';

const Body = v.object({
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
  password: v.string(),
  version: v.object({ number: v.string(), script: v.string() }),
  priority: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-100), v.maxValue(100))),
});

const echo = http(
  {
    operationId: 'echo',
    summary: 'echo',
    tags: [],
    permission: 'public',
    body: Body,
    query: PageQuery(50),
    params: v.object({ id: v.string() }),
    responses: { 200: { description: 'echo' } },
  },
  async ({ body, query, params, headers, sourceIp }) => ({
    statusCode: 200,
    body: {
      name: body.name,
      page: query.page,
      limit: query.limit,
      id: params.id,
      agent: headers['x-custom'],
      sourceIp,
    },
  }),
);

const call = async (endpoint: HttpEndpoint<'public'> | LambdaHttpHandler, event = httpEvent('POST', '/things/1')) =>
  parseResponse(await (typeof endpoint === 'function' ? endpoint : bound(endpoint))(event, lambdaContext()));

const valid = JSON.stringify({ name: 'web', password: 'hunter2', version: { number: '1.0.0', script: 'echo hi' } });
const post = (body: string | undefined, extra: Partial<Parameters<typeof httpEvent>[2]> = {}) => {
  const event = httpEvent('POST', '/things/1', { body, ...extra });
  return { ...event, pathParameters: { id: 'abc' } };
};

afterEach(() => vi.restoreAllMocks());

describe('http shell', () => {
  it('parses body, query and path, and answers JSON with a request id', async () => {
    // Prepare
    const event = { ...post(valid, { query: { page: '3', limit: '20' }, headers: { 'X-Custom': 'yes' } }) };
    // Act
    const response = await call(echo, event);
    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual({
      name: 'web',
      page: 3,
      limit: 20,
      id: 'abc',
      agent: 'yes',
      sourceIp: '203.0.113.7',
    });
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(['0', 'false', '-0', '0.0', '"x"', 'null', '[]', '[{}]', '12', 'true'])(
    'refuses the JSON body %s with a 400 saying the body must be an object',
    async (body) => {
      // Act
      const response = await call(echo, post(body));
      // Assess
      expect(response.statusCode).toBe(400);
      expect(response.json.error).toEqual({
        code: 'VALIDATION_ERROR',
        message: 'The body must be a JSON object.',
        details: { fields: [{ field: 'body', code: 'VALIDATION_ERROR', message: 'The body must be a JSON object.' }] },
      });
    },
  );

  it.each([
    ['page=1&page=2', 'page'],
    ['limit[]=5', 'limit'],
    ['page=1&limit=2&limit[0]=3', 'limit'],
  ])('refuses the repeated or array query %s with a 400 naming the parameter', async (query, name) => {
    // Prepare
    const event = {
      ...post(valid),
      rawQueryString: query,
      queryStringParameters: Object.fromEntries(new URLSearchParams(query)),
    };
    // Act
    const response = await call(echo, event);
    // Assess
    expect(response.statusCode).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    expect(response.json.error.details.fields).toEqual([expect.objectContaining({ field: name })]);
  });

  it('refuses a body over the limit with a 413 envelope before parsing it', async () => {
    // Prepare: valid JSON, just too big
    const big = JSON.stringify({
      name: 'x'.repeat(MAX_BODY_BYTES),
      password: 'p',
      version: { number: '1', script: 's' },
    });
    // Act
    const response = await call(echo, post(big));
    // Assess
    expect(response.statusCode).toBe(413);
    expect(response.json.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'body' }], limit_bytes: MAX_BODY_BYTES },
    });
  });

  it('ignores repeated query parameters the route does not know', async () => {
    const event = {
      ...post(valid),
      rawQueryString: 'utm=1&utm=2&page=2',
      queryStringParameters: { utm: '1,2', page: '2' },
    };
    const response = await call(echo, event);
    expect(response.statusCode).toBe(200);
    expect(response.json.page).toBe(2);
  });

  it('gives every request its own request id', async () => {
    const first = await call(echo, post(valid));
    const second = await call(echo, post(valid));
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
  });

  it('applies query defaults', async () => {
    const response = await call(echo, post(valid));
    expect(response.json).toMatchObject({ page: 1, limit: 50 });
  });

  it('decodes a base64 body', async () => {
    const response = await call(echo, post(valid, { base64: true }));
    expect(response.statusCode).toBe(200);
    expect(response.json.name).toBe('web');
  });

  it('answers INVALID_BODY for malformed JSON', async () => {
    const response = await call(echo, post('{"name": "web",'));
    expect(response.statusCode).toBe(400);
    expect(response.json.error).toMatchObject({ code: 'INVALID_BODY' });
    expect(typeof response.json.error.message).toBe('string');
    expect(response.headers['x-request-id']).toBeDefined();
  });

  it('answers MISSING_FIELD naming a missing nested field', async () => {
    const response = await call(
      echo,
      post(JSON.stringify({ name: 'web', password: 'x', version: { number: '1.0.0' } })),
    );
    expect(response.statusCode).toBe(400);
    expect(response.json.error.code).toBe('MISSING_FIELD');
    expect(response.json.error.details.fields).toEqual([
      { field: 'version.script', code: 'MISSING_FIELD', message: 'version.script is required.' },
    ]);
  });

  it('answers MISSING_FIELD when the body is absent', async () => {
    const response = await call(echo, post(undefined));
    expect(response.statusCode).toBe(400);
    expect(response.json.error.code).toBe('MISSING_FIELD');
    expect(response.json.error.details.fields[0].field).toBe('body');
  });

  it('answers VALIDATION_ERROR naming every bad field, missing ones included', async () => {
    const response = await call(echo, post(JSON.stringify({ name: '', password: 'x', priority: 101 })));
    expect(response.statusCode).toBe(400);
    expect(response.json.error.code).toBe('VALIDATION_ERROR');
    const fields = response.json.error.details.fields.map(
      (f: { field: string; code: string }) => `${f.field}:${f.code}`,
    );
    expect(fields).toEqual(
      expect.arrayContaining(['name:VALIDATION_ERROR', 'version:MISSING_FIELD', 'priority:VALIDATION_ERROR']),
    );
  });

  it('answers VALIDATION_ERROR for a bad query value', async () => {
    const response = await call(echo, post(valid, { query: { limit: '101' } }));
    expect(response.statusCode).toBe(400);
    expect(response.json.error.details.fields[0]).toMatchObject({ field: 'limit', code: 'VALIDATION_ERROR' });
  });

  it.each([
    [new NotFoundError('Action', 'x'), 404, 'NOT_FOUND'],
    [new ConflictError('taken'), 409, 'CONFLICT'],
    [new ServiceUnavailableError('queue down'), 503, 'SERVICE_UNAVAILABLE'],
    [new ExternalServiceError('The identity provider failed (not 2xx).'), 500, 'EXTERNAL_SERVICE_ERROR'],
    [new ExternalServiceError('The provider failed (timeout).', { status: 503 }), 503, 'EXTERNAL_SERVICE_ERROR'],
    [new ConfigurationError('The service is not configured: X is missing.'), 500, 'CONFIGURATION_ERROR'],
  ])('maps %s to its status and code', async (error, status, code) => {
    const failing = http(
      { operationId: 'f', summary: 'f', tags: [], permission: 'public', responses: {} },
      async () => {
        throw error;
      },
    );
    const response = await call(failing, httpEvent('GET', '/f'));
    expect(response.statusCode).toBe(status);
    expect(response.json.error.code).toBe(code);
    expect(response.json.error.message).toBe(error.message);
  });

  it('hides the message of unexpected errors and database errors', async () => {
    // Prepare
    const internals = 'connect ECONNREFUSED 10.0.0.5:8000 password=hunter2';
    const failures = [new Error(internals), new DatabaseError(false, { cause: new Error(internals) })];
    vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    for (const [index, error] of failures.entries()) {
      const failing = http(
        { operationId: 'f', summary: 'f', tags: [], permission: 'public', responses: {} },
        async () => {
          throw error;
        },
      );
      // Act
      const response = await call(failing, httpEvent('GET', '/f'));
      // Assess
      expect(response.statusCode).toBe(500);
      expect(response.json.error.code).toBe(index === 0 ? 'INTERNAL_ERROR' : 'DATABASE_ERROR');
      expect(response.raw).not.toContain('ECONNREFUSED');
      expect(response.raw).not.toContain('hunter2');
      expect(response.json.error.details.request_id).toBe(response.headers['x-request-id']);
    }
    expect(logger.error).toHaveBeenCalledTimes(2);
  });

  it('never writes the body or headers to the logs', async () => {
    // Prepare
    const lines: string[] = [];
    const capture = (chunk: unknown) => (lines.push(String(chunk)), true);
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    logger.setLogLevel('DEBUG');
    try {
      // Act
      await call(echo, post(valid, { headers: { authorization: 'Bearer sekret-token' } }));
      await call(echo, post('{"password": "hunter2"'));
    } finally {
      logger.setLogLevel('SILENT');
    }
    // Assess
    const logged = lines.join('\n');
    expect(logged).toContain('"path":"/things/1"');
    expect(logged).not.toContain('hunter2');
    expect(logged).not.toContain('sekret-token');
  });
});

describe('general rate limit in the shell', () => {
  const ping = (
    rateGate: (ip: string) => Promise<{ allowed: boolean; remaining: number; retryAfterSeconds: number }>,
  ) =>
    bound(
      http({ operationId: 'ping', summary: 'ping', tags: [], permission: 'public', responses: {} }, async () => ({
        statusCode: 200,
        body: { ok: true },
      })),
      { rateGate },
    );

  it('answers 429 in plain text with Retry-After and X-RateLimit-Remaining: 0, keyed by the client address', async () => {
    const seen: string[] = [];
    const handler = ping(async (ip) => (seen.push(ip), { allowed: false, remaining: 0, retryAfterSeconds: 1 }));
    const response = await call(handler, httpEvent('GET', '/ping'));
    expect(response.statusCode).toBe(429);
    expect(response.headers).toMatchObject({
      'content-type': 'text/plain; charset=utf-8',
      'retry-after': '1',
      'x-ratelimit-remaining': '0',
    });
    expect(response.json).toBeUndefined();
    expect(seen).toEqual(['203.0.113.7']);
  });

  it('lets the request through when the limiter’s store fails', async () => {
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const handler = ping(async () => {
      throw new Error('DynamoDB down');
    });
    expect((await call(handler, httpEvent('GET', '/ping'))).statusCode).toBe(200);
    expect(logger.warn).toHaveBeenCalledOnce();
  });
});
