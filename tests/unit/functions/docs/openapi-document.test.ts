// The document the docs function serves is the one the route tables describe: openapi.json is written by
// `npm run openapi:document`, and this fails while someone changed a route or a schema without running it.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../../functions/http/docs/openapi-get.js';
import { currentOpenApiDocument, documentText, OPENAPI_DOCUMENT_FILE } from '../../../../local/openapi-document.js';

describe('the served OpenAPI document', () => {
  it('is the route tables’ document (else: npm run openapi:document)', async () => {
    const current = currentOpenApiDocument();
    expect(await readFile(OPENAPI_DOCUMENT_FILE, 'utf8'), 'run `npm run openapi:document`').toBe(documentText(current));
    expect(await openApiDocument()).toEqual(current);
  });
});
