// The shell's composition: dependencies are passed in (a route whose shell cannot check its credential does not
// compile, and fails at bind time if forced), refusals are dressed like answers, and the JSON body is parsed by
// @middy/http-json-body-parser whatever the content type.
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { http } from '../../../../functions/shared/http.js';
import { areaRouter, route } from '../../../../functions/shared/router.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { bound, testShell } from '../../../fakes/shell.js';

const userEndpoint = http(
  { operationId: 'u', summary: 'u', tags: [], permission: 'targets:read', responses: {} },
  async () => ({ statusCode: 200, body: {} }),
);
const agentEndpoint = http(
  { operationId: 'a', summary: 'a', tags: [], permission: 'agent', responses: {} },
  async () => ({ statusCode: 200, body: {} }),
);
const publicEndpoint = http(
  { operationId: 'p', summary: 'p', tags: [], permission: 'public', responses: {} },
  async () => ({ statusCode: 200, body: {} }),
);

describe('a shell without the authenticator its routes need', () => {
  const { authenticate: _user, authenticateAgent: _agent, ...base } = testShell();
  const withUser = { ...base, authenticate: testShell().authenticate };

  it('does not compile, and refuses to bind if forced', () => {
    // @ts-expect-error a route that takes a user credential needs `authenticate`
    expect(() => areaRouter([route('GET', '/u', userEndpoint)], base)).toThrow(/bound without an authenticator/);
    // @ts-expect-error an agent route needs `authenticateAgent`
    expect(() => areaRouter([route('GET', '/u', userEndpoint), route('GET', '/a', agentEndpoint)], withUser)).toThrow(
      /without an agent authenticator/,
    );
    expect(() => areaRouter([route('GET', '/p', publicEndpoint)], base)).not.toThrow();
  });

  it('every area of the service binds (each router is built when its module loads)', async () => {
    const routers = {
      admin: () => import('../../../../functions/http/admin/router.js'),
      auth: () => import('../../../../functions/http/auth/router.js'),
      catalog: () => import('../../../../functions/http/catalog/router.js'),
      deployments: () => import('../../../../functions/http/deployments/router.js'),
      docs: () => import('../../../../functions/http/docs/router.js'),
      meta: () => import('../../../../functions/http/meta/router.js'),
      oauth: () => import('../../../../functions/http/oauth/router.js'),
      targets: () => import('../../../../functions/http/targets/router.js'),
      tenancy: () => import('../../../../functions/http/tenancy/router.js'),
      notFound: () => import('../../../../functions/http/not-found.js'),
    };
    for (const [area, load] of Object.entries(routers)) {
      expect([area, typeof (await load()).handler]).toEqual([area, 'function']);
    }
  });
});

describe('refusals are answers like any other', () => {
  it('a 429 of the rate gate and a 500 CONFIGURATION_ERROR of the startup check carry the request id and the security headers', async () => {
    const limited = parseResponse(
      await bound(publicEndpoint, { rateGate: async () => ({ allowed: false, remaining: 0, retryAfterSeconds: 2 }) })(
        httpEvent('GET', '/p'),
        lambdaContext(),
      ),
    );
    const unconfigured = parseResponse(
      await bound(publicEndpoint, { startupProblems: () => ['X is not set'] })(httpEvent('GET', '/p'), lambdaContext()),
    );
    for (const [reply, status] of [
      [limited, 429],
      [unconfigured, 500],
    ] as const) {
      expect(reply.statusCode).toBe(status);
      expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(reply.headers['x-frame-options']).toBe('DENY');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(limited.headers['retry-after']).toBe('2');
    expect(unconfigured.headers['retry-after']).toBeUndefined();
  });
});

describe('the JSON body', () => {
  const echo = bound(
    http(
      {
        operationId: 'e',
        summary: 'e',
        tags: [],
        permission: 'public',
        body: v.optional(v.object({ name: v.optional(v.string()) })),
        responses: {},
      },
      async ({ body }) => ({ statusCode: 200, body: { body: body ?? null } }),
    ),
  );
  const post = async (body: string | undefined, contentType?: string) =>
    parseResponse(
      await echo(
        httpEvent('POST', '/e', {
          ...(body === undefined ? {} : { body }),
          headers: contentType === undefined ? {} : { 'content-type': contentType },
        }),
        lambdaContext(),
      ),
    );

  it('is read as JSON whatever the content type (curl -d sends a form type), and may be absent where the route allows', async () => {
    expect((await post('{"name":"x"}', 'application/x-www-form-urlencoded')).json).toEqual({ body: { name: 'x' } });
    expect((await post('{"name":"y"}')).json).toEqual({ body: { name: 'y' } });
    expect((await post(undefined)).json).toEqual({ body: null });
    expect((await post('  \n')).json).toEqual({ body: null });
  });

  it('answers INVALID_BODY for malformed JSON and refuses __proto__ keys', async () => {
    const malformed = await post('{"name":', 'application/json');
    expect([malformed.statusCode, malformed.json.error.code]).toEqual([400, 'INVALID_BODY']);
    const proto = await post('{"name":"x","__proto__":{"admin":true}}', 'application/json');
    expect([proto.statusCode, proto.json.error.code, proto.json.error.details.fields[0].field]).toEqual([
      400,
      'VALIDATION_ERROR',
      '__proto__',
    ]);
    const nested = await post('{"name":"x","meta":{"a":[{"constructor":{"prototype":{}}}]}}', 'text/plain');
    expect([nested.statusCode, nested.json.error.details.fields[0].field]).toEqual([400, 'meta.a.0.constructor']);
  });
});
