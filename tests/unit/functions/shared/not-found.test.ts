// The NOT_FOUND envelope of API Gateway's $default route, and its one exception: `/`, the console's page, which
// CloudFront serves from the bucket as its default root object; should it reach the API, it is sent to /index.html.
import { describe, expect, it } from 'vitest';
import { notFound } from '../../../../functions/shared/not-found.js';
import { httpEvent, lambdaContext, parseResponse } from '../../../fakes/lambda.js';
import { bound } from '../../../fakes/shell.js';

const handler = bound(notFound);
const call = async (method: string, path: string) =>
  parseResponse((await handler(httpEvent(method, path), lambdaContext())) as Parameters<typeof parseResponse>[0]);

describe('the not-found route', () => {
  it('sends GET and HEAD of / to the console page /index.html, never cached', async () => {
    for (const method of ['GET', 'HEAD']) {
      const answer = await call(method, '/');
      expect(answer.statusCode, method).toBe(302);
      expect(answer.headers['location']).toBe('/index.html');
      expect(answer.headers['cache-control']).toBe('no-store');
    }
  });

  it('answers the NOT_FOUND envelope for any other path or method, / with another method included', async () => {
    for (const [method, path] of [
      ['GET', '/nothing-here'],
      ['GET', '/index'],
      ['POST', '/'],
      ['DELETE', '/'],
    ] as const) {
      const answer = await call(method, path);
      expect(answer.statusCode, `${method} ${path}`).toBe(404);
      expect(answer.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
    }
  });
});
