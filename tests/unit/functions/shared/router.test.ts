import { describe, expect, it } from 'vitest';
import { http } from '../../../../functions/shared/http.js';
import { areaRouter, matchRoute, route } from '../../../../functions/shared/router.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { testShell } from '../../../fakes/shell.js';

const endpoint = (name: string) =>
  http({ operationId: name, summary: name, tags: [], permission: 'public', responses: {} }, async () => ({
    statusCode: 200,
    body: { name },
  }));

const routes = [
  route('GET', '/api/v1/deployments/{id}', endpoint('get')),
  route('GET', '/api/v1/deployments/pending', endpoint('pending')),
  route('DELETE', '/api/v1/deployments/pending/{id}', endpoint('deletePending')),
  route('GET', '/api/v1/actions/{id}/versions/{version}', endpoint('version')),
];

describe('matchRoute', () => {
  it('prefers literal segments over parameters', () => {
    expect(matchRoute(routes, 'GET', '/api/v1/deployments/pending')?.route.path).toBe('/api/v1/deployments/pending');
    expect(matchRoute(routes, 'GET', '/api/v1/deployments/abc')?.params).toEqual({ id: 'abc' });
  });

  it('decodes parameters and ignores a trailing slash', () => {
    expect(matchRoute(routes, 'GET', '/api/v1/actions/a%2Fb/versions/1.2.3-rc.1/')?.params).toEqual({
      id: 'a/b',
      version: '1.2.3-rc.1',
    });
  });

  it('matches nothing for another method, another length or malformed encoding', () => {
    expect(matchRoute(routes, 'POST', '/api/v1/deployments/abc')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/api/v1/deployments/abc/extra')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/api/v1/deployments/%E0%A4%A')).toBeUndefined();
  });
});

describe('areaRouter', () => {
  const router = areaRouter(routes, testShell());

  it('calls the matching endpoint with its path parameters', async () => {
    const response = parseResponse(
      await router(httpEvent('DELETE', '/api/v1/deployments/pending/42'), lambdaContext()),
    );
    expect(response.statusCode).toBe(200);
    expect(response.json).toEqual({ name: 'deletePending' });
  });

  it('answers the NOT_FOUND envelope for an unknown path or method', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/nothing'],
      ['PATCH', '/api/v1/deployments/1'],
    ] as const) {
      const response = parseResponse(await router(httpEvent(method, path), lambdaContext()));
      expect(response.statusCode).toBe(404);
      expect(response.json.error).toMatchObject({ code: 'NOT_FOUND', details: { method, path } });
      expect(response.headers['x-request-id']).toBeDefined();
    }
  });
});
