import { describe, expect, it } from 'vitest';
import type { Permission } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { http } from '../../../../functions/shared/http.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { bound } from '../../../fakes/shell.js';

const callerOf = (kind: Caller['kind']): Caller => ({
  kind,
  userId: 'u1',
  tenantId: null,
  roles: [],
  permissions: new Set<Permission>(['api_keys:read']),
});

const endpoint = (kind: Caller['kind']) =>
  bound(
    http(
      {
        operationId: 'mine',
        summary: 'mine',
        tags: [],
        permission: 'api_keys:read',
        credentials: 'user',
        responses: { 200: { description: 'ok' } },
      },
      async () => ({ statusCode: 200, body: { ok: true } }),
    ),
    { authenticate: async () => callerOf(kind) },
  );

describe("routes with credentials: 'user'", () => {
  it('answer 403 FORBIDDEN (user_credentials_required) to an API key, and serve a user login', async () => {
    const asKey = parseResponse(
      await endpoint('api_key')(
        httpEvent('GET', '/mine', { headers: { authorization: 'Bearer dpl_x' } }),
        lambdaContext(),
      ),
    );
    const asUser = parseResponse(
      await endpoint('user')(httpEvent('GET', '/mine', { headers: { authorization: 'Bearer jwt' } }), lambdaContext()),
    );
    expect([asKey.statusCode, asKey.json.error.code, asKey.json.error.details.reason]).toEqual([
      403,
      'FORBIDDEN',
      'user_credentials_required',
    ]);
    expect([asUser.statusCode, asUser.json]).toEqual([200, { ok: true }]);
  });
});
