// The OpenAPI document built from the route tables: valid OpenAPI 3.1, and complete enough to generate a client
// from (every status an operation can answer, with its content type and schema).
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { documentedRoutes } from '../../../../functions/http/routes.js';
import { buildOpenApi } from '../../../../functions/shared/openapi.js';
import { conformanceProblems } from '../../../support/openapi-conformance.js';

type JsonObject = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const doc = buildOpenApi(documentedRoutes(), { version: 'test' }) as JsonObject;
const operations = Object.entries(doc['paths'] as JsonObject).flatMap(([path, ops]) =>
  Object.entries(ops as JsonObject).map(([method, op]) => ({
    path,
    method,
    op: op as JsonObject,
    name: `${method.toUpperCase()} ${path}`,
  })),
);
const ENVELOPE = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } };

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document listing every route', async () => {
    // Act
    const result = await new Validator().validate(doc);
    // Assess
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(operations).toHaveLength(documentedRoutes().length);
  });

  it('names a server: relative when no URL is known, else the given one', () => {
    expect(doc['servers']).toEqual([{ url: '/' }]);
    expect(buildOpenApi([], { version: 'x', serverUrl: 'https://api.example.test' })['servers']).toEqual([
      { url: 'https://api.example.test' },
    ]);
  });

  it('gives every error status of every operation the error envelope (OAuth: its pages’ HTML, RFC 6749 errors)', () => {
    /** The authorization page's steps answer a browser: their documented errors are pages. */
    const PAGES = [
      'GET /oauth/authorize',
      'POST /oauth/consent',
      'GET /oauth/sso/{provider}',
      'GET /oauth/authorize/sso',
    ];
    /** The token, revocation and introspection endpoints answer RFC 6749 section 5.2 errors. */
    const RFC = ['POST /oauth/token', 'POST /oauth/revoke', 'POST /oauth/introspect'];
    for (const { name, op } of operations) {
      for (const [status, response] of Object.entries(op['responses'] as JsonObject)) {
        if (status === '429' || !(status === 'default' || Number(status) >= 400)) continue;
        const content = response.content as JsonObject | undefined;
        if (PAGES.includes(name) && content?.['text/html'] !== undefined)
          expect(Object.keys(content)).toEqual(['text/html']);
        else if (RFC.includes(name) && ['400', '401'].includes(status))
          expect(content?.['application/json']?.schema?.required).toEqual(['error']);
        else expect({ name, status, content }).toEqual({ name, status, content: ENVELOPE });
      }
      for (const status of ['500', '503', 'default'])
        expect({ name, status, has: op['responses'][status] !== undefined }).toEqual({ name, status, has: true });
    }
  });

  it('documents 429 on every operation: the general limiter’s plain text with Retry-After, plus the envelope where a route has its own', () => {
    for (const { name, op } of operations) {
      const tooMany = op['responses']['429'];
      expect({ name, types: Object.keys(tooMany.content).includes('text/plain') }).toEqual({ name, types: true });
      expect(Object.keys(tooMany.headers)).toEqual(['Retry-After', 'X-RateLimit-Remaining']);
    }
    const login = operations.find((o) => o.name === 'POST /api/v1/auth/login')!;
    expect(Object.keys(login.op['responses']['429'].content).sort()).toEqual(['application/json', 'text/plain']);
  });

  it('documents 413 on every operation that takes a body, and a JSON schema for every success with a body', () => {
    for (const { name, op } of operations) {
      expect({ name, has413: op['responses']['413'] !== undefined }).toEqual({
        name,
        has413: op['requestBody'] !== undefined,
      });
      for (const [status, response] of Object.entries(op['responses'] as JsonObject)) {
        if (!status.startsWith('2') || response.content === undefined) continue;
        for (const [type, media] of Object.entries(response.content as JsonObject)) {
          expect({ name, status, type, schema: typeof media.schema }).toEqual({ name, status, type, schema: 'object' });
        }
      }
    }
  });

  it('gives the six deployment reads and answers that had none a response schema', () => {
    const schemaOf = (name: string, status: string) =>
      operations.find((o) => o.name === name)?.op['responses'][status]?.content?.['application/json']?.schema;
    expect(schemaOf('GET /api/v1/deployments', '200').required).toEqual(['data', 'meta', 'status_counts']);
    expect(schemaOf('GET /api/v1/deployments/{id}', '200').required).toContain('config');
    expect(schemaOf('GET /api/v1/deployments/pending', '200').type).toBe('array');
    expect(schemaOf('POST /api/v1/deployments/{id}/cancel', '200').required).toContain('state');
    expect(schemaOf('GET /api/v1/deployments/{id}/logs/history', '200').items.required).toContain('event_type');
    expect(schemaOf('POST /api/v1/deployments', '200').required).toEqual([
      'dry_run',
      'valid',
      'plan',
      'warnings',
      'target_summary',
    ]);
  });

  it('types query parameters as they are on the wire: integers with their bounds and defaults, enums once each', () => {
    const parameter = (name: string, param: string) =>
      (operations.find((o) => o.name === name)?.op['parameters'] as JsonObject[]).find((p) => p['name'] === param)?.[
        'schema'
      ];
    expect(parameter('GET /api/v1/deployments', 'page')).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: 1,
    });
    expect(parameter('GET /api/v1/deployments', 'limit')).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 50,
    });
    expect(parameter('GET /api/v1/deployments/{id}/logs/history', 'offset')).toMatchObject({
      type: 'integer',
      minimum: 0,
      default: 0,
    });
    expect(parameter('GET /api/v1/deployments/{id}/logs', 'last_event_id')).toEqual({ type: 'integer', minimum: 0 });
    expect(parameter('GET /api/v1/deployment-freezes', 'active')).toMatchObject({ enum: ['true', 'false'] });
    const statuses = parameter('GET /api/v1/deployments', 'status').enum as string[];
    expect(new Set(statuses).size).toBe(statuses.length);
  });

  it('types the variables of a create body (a custom check in valibot)', () => {
    const body = operations.find((o) => o.name === 'POST /api/v1/deployments')!.op['requestBody'].content[
      'application/json'
    ].schema;
    expect(body.properties.variables).toMatchObject({
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean'] },
      maxProperties: 100,
    });
    expect(body.properties.prompted_values).toMatchObject({ type: 'object' });
  });

  it('documents the event streams’ errors as JSON envelopes', () => {
    for (const name of ['GET /api/v1/deployments/{id}/logs', 'GET /api/v1/sse/{resource_type}']) {
      const responses = operations.find((o) => o.name === name)!.op['responses'];
      expect(Object.keys(responses['200'].content)).toEqual(['text/event-stream']);
      for (const status of ['400', '401', '403', '404']) expect(responses[status].content).toEqual(ENVELOPE);
    }
  });
});

describe('the conformance check of the e2e client', () => {
  const envelope = JSON.stringify({ error: { code: 'NOT_FOUND', message: 'No such deployment.' } });

  it('takes an answer the document describes, by path template and status', () => {
    expect(
      conformanceProblems({
        method: 'GET',
        path: '/api/v1/deployments/abc?x=1',
        status: 404,
        contentType: 'application/json; charset=utf-8',
        text: envelope,
      }),
    ).toEqual([]);
    expect(
      conformanceProblems({
        method: 'GET',
        path: '/api/v1/deployments/abc',
        status: 429,
        contentType: 'text/plain; charset=utf-8',
        text: 'slow down',
      }),
    ).toEqual([]);
    expect(
      conformanceProblems({
        method: 'DELETE',
        path: '/api/v1/admin/roles/x',
        status: 204,
        contentType: null,
        text: '',
      }),
    ).toEqual([]);
  });

  it('names method, path template, status and the schema errors of an answer it does not describe', () => {
    // Act
    const problems = conformanceProblems({
      method: 'GET',
      path: '/api/v1/deployments/pending',
      status: 200,
      contentType: 'application/json',
      text: JSON.stringify([{ id: 'a' }]),
    });
    // Assess
    expect(problems).toContain(
      'GET /api/v1/deployments/pending answered 200: /0 must have required property \'queued_at\' {"missingProperty":"queued_at"}',
    );
  });

  it('refuses a content type the response does not list, and a body where none is documented', () => {
    expect(
      conformanceProblems({
        method: 'GET',
        path: '/api/v1/deployments/abc',
        status: 404,
        contentType: 'text/html',
        text: '<p>',
      }),
    ).toHaveLength(1);
    expect(
      conformanceProblems({
        method: 'DELETE',
        path: '/api/v1/deployments/pending/x',
        status: 200,
        contentType: 'application/json',
        text: '{}',
      }),
    ).toHaveLength(1);
  });

  it('holds a request outside the document to the error envelope', () => {
    expect(
      conformanceProblems({
        method: 'GET',
        path: '/api/v1/nope',
        status: 404,
        contentType: 'application/json',
        text: envelope,
      }),
    ).toEqual([]);
    expect(
      conformanceProblems({
        method: 'GET',
        path: '/api/v1/nope',
        status: 404,
        contentType: 'application/json',
        text: '{"message":"Not Found"}',
      }),
    ).not.toEqual([]);
    expect(
      conformanceProblems({
        method: 'GET',
        path: '/api/v1/nope',
        status: 200,
        contentType: 'application/json',
        text: '{}',
      }),
    ).not.toEqual([]);
  });
});
