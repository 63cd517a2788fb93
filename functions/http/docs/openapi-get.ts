// handler -> buildOpenApi(every route table). Built once per container, on the first request.
import * as v from 'valibot';
import pkg from '../../../package.json' with { type: 'json' };
import { http } from '../../shared/http.js';
import { buildOpenApi } from '../../shared/openapi.js';
import { onceAsync } from '../../shared/once.js';

// The route tables are imported on first use: they include this endpoint, so a static import would be a cycle.
/** The document, built once per container (the docs page renders it too). */
export const openApiDocument = onceAsync(async () => {
  const { documentedRoutes } = await import('../routes.js');
  return buildOpenApi(documentedRoutes(), { version: pkg.version });
});

export const handler = http(
  {
    operationId: 'openapi',
    summary: 'This API as an OpenAPI 3.1 document',
    tags: ['meta'],
    permission: 'public',
    responses: {
      200: {
        description: 'The OpenAPI document',
        contentType: 'application/json',
        schema: v.looseObject({
          openapi: v.string(),
          info: v.looseObject({ title: v.string(), version: v.string() }),
          paths: v.record(v.string(), v.unknown()),
        }),
      },
    },
  },
  async () => ({ statusCode: 200, body: await openApiDocument() }),
);
