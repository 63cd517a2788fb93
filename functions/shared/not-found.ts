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
    throw new RouteNotFoundError(method, path);
  },
);
