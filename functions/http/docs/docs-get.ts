// handler -> the OpenAPI document (openapi-get) -> one self-contained HTML page. Built once per container.
import * as v from 'valibot';
import { http } from '../../shared/http.js';
import { onceAsync } from '../../shared/once.js';
import { openApiHtml } from '../../shared/openapi-html.js';
import { openApiDocument } from './openapi-get.js';

const page = onceAsync(async () => openApiHtml(await openApiDocument()));

/** The page runs no script and loads nothing: a policy that says so. */
const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

export const handler = http(
  {
    operationId: 'docs',
    summary:
      'This API as a readable page (rendered from the OpenAPI document; no script, nothing loaded from elsewhere)',
    tags: ['meta'],
    permission: 'public',
    responses: { 200: { description: 'An HTML page', contentType: 'text/html', schema: v.string() } },
  },
  async () => ({ statusCode: 200, body: await page(), headers: HTML_HEADERS }),
);
