// handler -> the OpenAPI document of every route (openapi-document.generated.ts, written from the route tables by
// `npm run openapi:document`; a unit test fails while it is out of date), parsed once per container. Shipping the document rather than the
// routes keeps this function's bundle to what it runs (the routes made it 1 MiB, the slowest cold start).
import * as v from 'valibot';
import { http } from '../../shared/http.js';
import { once } from '../../shared/once.js';
import { OPENAPI_DOCUMENT_JSON } from './openapi-document.generated.js';

/** The document (the docs page renders it too). */
export const openApiDocument = once(async (): Promise<Record<string, unknown>> => JSON.parse(OPENAPI_DOCUMENT_JSON));

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
