// Every list's `limit` against the spec's paging rules (api.md: "`limit` is items per page, max 100"; "pagination
// page >= 1 and limit 1 to 100"; Limits: deployment list default 50, logs/history default 100, analysis requests
// default 50), over the route table itself: its OpenAPI parameters and its own query schemas.
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { documentedRoutes } from '../../../../functions/http/routes.js';
import { buildOpenApi } from '../../../../functions/shared/openapi.js';

type JsonObject = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The spec's default where it names one; 50 (the deployment list's) where it is silent. */
const SPEC_DEFAULTS: Readonly<Record<string, number>> = {
  'GET /api/v1/deployments': 50,
  'GET /api/v1/deployments/{id}/logs/history': 100,
  'GET /api/v1/admin/analysis/requests': 50,
};
const DEFAULT_WHERE_SILENT = 50;

const doc = buildOpenApi(documentedRoutes(), { version: 'test' }) as JsonObject;
const limits = Object.entries(doc['paths'] as JsonObject).flatMap(([path, ops]) =>
  Object.entries(ops as JsonObject).flatMap(([method, op]) => {
    const limit = ((op as JsonObject)['parameters'] as JsonObject[] | undefined)?.find(
      (p) => p['in'] === 'query' && p['name'] === 'limit',
    );
    return limit === undefined ? [] : [{ name: `${method.toUpperCase()} ${path}`, schema: limit['schema'] }];
  }),
);
const routesWithLimit = documentedRoutes().filter((r) => {
  const query = r.handler.spec.query as v.GenericSchema | undefined;
  return query !== undefined && 'entries' in query && 'limit' in (query.entries as object);
});

describe('the page size of every list', () => {
  it('finds the lists: every route whose query takes a limit, the three the spec names among them', () => {
    // Assess
    expect(limits.length).toBe(routesWithLimit.length);
    expect(limits.length).toBeGreaterThanOrEqual(15);
    for (const name of Object.keys(SPEC_DEFAULTS)) expect(limits.map((l) => l.name)).toContain(name);
  });

  it.each(limits.map((l) => [l.name, l.schema]))(
    '%s: limit is an integer 1..100 with the spec’s default',
    (name, schema) => {
      expect(schema).toEqual({
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: SPEC_DEFAULTS[name as string] ?? DEFAULT_WHERE_SILENT,
      });
    },
  );

  it.each(routesWithLimit.map((r) => [`${r.method} ${r.path}`, r.handler.spec.query as v.GenericSchema]))(
    '%s: its query schema takes limit 1 and 100, refuses 0, 101 and 500, and defaults it',
    (_name, query) => {
      const limitOf = (limit?: string) => {
        const result = v.safeParse(query, limit === undefined ? {} : { limit });
        return result.success ? (result.output as { limit: number }).limit : 'refused';
      };
      expect([limitOf('1'), limitOf('100'), limitOf('0'), limitOf('101'), limitOf('500')]).toEqual([
        1,
        100,
        'refused',
        'refused',
        'refused',
      ]);
      expect(typeof limitOf()).toBe('number');
    },
  );
});
