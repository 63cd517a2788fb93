import { describe, expect, it } from 'vitest';
import { openApiHtml } from '../../../../functions/shared/openapi-html.js';

const document = (summary: string) => ({
  info: { title: 'API', version: '1.0.0' },
  paths: {
    '/api/v1/things/{id}': {
      get: {
        operationId: 'get_thing',
        summary,
        tags: ['things'],
        'x-permission': 'things:read',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: { description: 'The thing', content: { 'application/json': { schema: { type: 'object' } } } },
          404: { description: 'No such thing' },
        },
      },
    },
  },
});

describe('openApiHtml', () => {
  it('renders each operation with its method, path, permission, parameters and responses', () => {
    const html = openApiHtml(document('Reads one thing'));
    expect(html).toContain('id="get_thing"');
    expect(html).toContain('<span class="method get">GET</span> <code>/api/v1/things/{id}</code>');
    expect(html).toContain('things:read');
    expect(html).toContain('<td><code>id</code></td><td>path</td><td>yes</td>');
    expect(html).toContain('<b>404</b> No such thing');
  });

  it('escapes every text of the document: a summary is data, never markup', () => {
    const html = openApiHtml(document('<img src=x onerror=alert(1)>'));
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});
