// The NOT_FOUND envelope for a path or method no endpoint serves.
import { RouteNotFoundError } from '../../domain/errors.js';
import { http } from './http.js';

export const notFound = http(
  {
    operationId: 'not_found',
    summary: 'Any path or method no endpoint serves',
    tags: [],
    permission: 'public',
    responses: {},
  },
  async ({ method, path }) => {
    // `/` is the console's page: CloudFront answers it from the bucket as its default root object (`index.html`).
    // Should a request for `/` reach the API instead (docs/cloud.md, "The web console"), it is sent to the page's
    // own path, which CloudFront serves from the bucket: the console's routes live in the fragment (`#/...`).
    if ((method === 'GET' || method === 'HEAD') && path === '/')
      return { statusCode: 302, headers: { location: '/index.html', 'cache-control': 'no-store' } };
    throw new RouteNotFoundError(method, path);
  },
);
