// Property tests over every request schema of every route (allRoutes(): body, query and path schemas), through the
// functions the HTTP shell itself parses with, and the envelope renderError gives:
// - any JSON value (and any text) as a body, any query string, any path value: a success or a 400 envelope,
//   never a throw of anything else;
// - each field of a valid body / query / path given a value of a wrong type: a 400 envelope naming that field;
// - a query parameter the route knows, repeated or as an array: a 400 naming it;
// - valid values generated from the schema: accepted.
// Fixed seeds and a bounded number of runs keep it a few seconds long and the same every run.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../../domain/errors.js';
import { allRoutes } from '../../../../functions/http/routes.js';
import { renderError } from '../../../../functions/shared/errors.js';
// ---- adapter: where the shell's request parsers live (one place to change when they move) ----
import { parseQuery, readBody, validBody } from '../../../../functions/shared/http.js';
import { parseWith } from '../../../../functions/shared/validation.js';
const shell = {
  // The shell's jsonBody (readBody) then validateRequest (validBody), as functions/shared/shell.ts chains them.
  body: (schema: v.GenericSchema, event: APIGatewayProxyEventV2): unknown => validBody(schema, readBody(event)),
  query: (schema: v.GenericSchema, event: APIGatewayProxyEventV2): unknown => parseQuery(schema, event),
  path: (schema: v.GenericSchema, params: Record<string, string>): unknown => parseWith(schema, params, 'path'),
};
// ------------------------------------------------------------------------------------------------
import { entriesOf, validFor } from '../../../support/valibot-arbitrary.js';

const SEED = 2126;
const RUNS = 20;
const options = (runs = RUNS) => ({ seed: SEED, numRuns: runs, endOnFailure: true });

const bodyEvent = (text: string): APIGatewayProxyEventV2 =>
  ({ body: text, isBase64Encoded: false, headers: {} }) as unknown as APIGatewayProxyEventV2;
const queryEvent = (pairs: readonly (readonly [string, string])[]): APIGatewayProxyEventV2 => {
  const search = new URLSearchParams(pairs.map(([k, val]): [string, string] => [k, val]));
  const joined: Record<string, string> = {};
  for (const [k, val] of pairs) joined[k] = joined[k] === undefined ? val : `${joined[k]},${val}`; // API Gateway joins repeats
  return {
    rawQueryString: search.toString(),
    queryStringParameters: joined,
    headers: {},
  } as unknown as APIGatewayProxyEventV2;
};
const queryPairs = (value: Record<string, unknown>): [string, string][] =>
  Object.entries(value)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => [k, String(x)]);

interface Outcome {
  readonly ok: boolean;
  readonly status?: number;
  readonly body?: {
    error: { code: string; message: string; details?: { fields?: { field: string; code: string; message: string }[] } };
  };
}

/** Runs a parser as the shell would and renders a refusal as the shell's error middleware does. */
const attempt = (parse: () => unknown): Outcome => {
  try {
    parse();
    return { ok: true };
  } catch (error) {
    // Only the domain's own errors may come out of parsing: anything else would be a 500.
    if (!(error instanceof DomainError))
      throw new Error(`the parser threw a non-domain error: ${String(error)}`, { cause: error });
    const rendered = renderError(error, 'property-test');
    return { ok: false, status: rendered.statusCode, body: rendered.body as Outcome['body'] };
  }
};

const expectRefusal = (outcome: Outcome, field?: string): void => {
  expect(outcome.ok).toBe(false);
  expect(outcome.status).toBe(400);
  expect(outcome.body?.error).toMatchObject({
    code: expect.stringMatching(/^(VALIDATION_ERROR|MISSING_FIELD|INVALID_BODY)$/),
    message: expect.any(String),
  });
  if (field !== undefined) {
    const named = (outcome.body?.error.details?.fields ?? []).map((f) => f.field);
    expect(
      named.some((name) => name === field || name.startsWith(`${field}.`)),
      `${JSON.stringify(named)} should name ${field}`,
    ).toBe(true);
  }
};

const expectSuccessOr400 = (outcome: Outcome): void => {
  if (!outcome.ok) expectRefusal(outcome);
};

/** JSON values of every type; a field schema's wrong ones are those it refuses. */
const CANDIDATES: readonly unknown[] = [
  'x',
  '',
  12345.5,
  -1,
  0,
  true,
  false,
  null,
  [],
  [1, 'a'],
  {},
  { a: 1 },
  1e308,
  'z'.repeat(70_000),
];
const wrongValuesFor = (schema: v.GenericSchema): unknown[] =>
  CANDIDATES.filter((c) => !v.safeParse(schema, c).success);
/** Query and path values arrive as text: the wrong ones are texts the field refuses. */
const TEXT_CANDIDATES: readonly string[] = [
  'x',
  '',
  ' ',
  '1.5',
  '-1',
  '0',
  '1e3',
  '99999999999999999999',
  'true',
  '%zz',
  '<script>',
  'z'.repeat(300),
];
const wrongTextsFor = (schema: v.GenericSchema): string[] =>
  TEXT_CANDIDATES.filter((c) => !v.safeParse(schema, c).success);

const routes = allRoutes().map((route) => ({ name: `${route.method} ${route.path}`, spec: route.handler.spec }));
const withBody = routes.filter((r) => r.spec.body !== undefined);
const withQuery = routes.filter((r) => r.spec.query !== undefined);
const withParams = routes.filter((r) => r.spec.params !== undefined);

describe('request schemas, every route', () => {
  it('has schemas to test (the route table is read)', () => {
    expect(withBody.length).toBeGreaterThan(20);
    expect(withQuery.length).toBeGreaterThan(5);
    expect(withParams.length).toBeGreaterThan(20);
  });

  describe.each(withBody)('body of $name', ({ spec }) => {
    const schema = spec.body!;

    it('any JSON value, and any text, is accepted or refused with a 400 envelope, never thrown', () => {
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 4 }), (value) =>
          expectSuccessOr400(attempt(() => shell.body(schema, bodyEvent(JSON.stringify(value))))),
        ),
        options(),
      );
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) =>
          expectSuccessOr400(attempt(() => shell.body(schema, bodyEvent(text)))),
        ),
        options(),
      );
    });

    it('a body that is not an object is a 400 naming the body', () => {
      for (const text of ['0', 'false', '-0', '"x"', '[]', '[{}]', 'null', '1e999'])
        expectRefusal(
          attempt(() => shell.body(schema, bodyEvent(text))),
          'body',
        );
    });

    it('valid bodies generated from the schema are accepted', () => {
      fc.assert(
        fc.property(validFor(schema), (value) => {
          expect(attempt(() => shell.body(schema, bodyEvent(JSON.stringify(value))))).toEqual({ ok: true });
        }),
        options(),
      );
    });

    it('each field given a wrong type is a 400 naming the field', () => {
      const fields = Object.entries(entriesOf(schema)).map(([key, entry]) => ({ key, wrong: wrongValuesFor(entry) }));
      if (fields.length === 0) {
        // A body without fields (`{}`): any object is taken, unknown keys ignored.
        expect(attempt(() => shell.body(schema, bodyEvent('{"x":1}')))).toEqual({ ok: true });
        return;
      }
      for (const { key, wrong } of fields) {
        if (wrong.length === 0) continue; // the field takes any JSON value
        fc.assert(
          fc.property(validFor(schema), fc.constantFrom(...wrong), (valid, bad) => {
            const body = { ...(valid as Record<string, unknown>), [key]: bad };
            expectRefusal(
              attempt(() => shell.body(schema, bodyEvent(JSON.stringify(body)))),
              key,
            );
          }),
          options(8),
        );
      }
    });

    it('`__proto__`, `constructor` and unknown keys never throw', () => {
      fc.assert(
        fc.property(
          validFor(schema),
          fc.constantFrom('__proto__', 'constructor', 'prototype', 'x-unknown'),
          fc.jsonValue({ maxDepth: 2 }),
          (valid, key, value) => {
            const text = JSON.stringify(valid)
              .replace(/^\{/, `{${JSON.stringify(key)}:${JSON.stringify(value)},`)
              .replace(/,\}$/, '}');
            expectSuccessOr400(attempt(() => shell.body(schema, bodyEvent(text))));
            expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
          },
        ),
        options(10),
      );
    });
  });

  describe.each(withQuery)('query of $name', ({ spec }) => {
    const schema = spec.query!;
    const names = Object.keys(entriesOf(schema));

    it('any query string is accepted or refused with a 400 envelope, never thrown', () => {
      const name = fc.oneof(
        fc.constantFrom(...names, ...names.map((n) => `${n}[]`), `${names[0]}[0]`),
        fc.string({ maxLength: 8 }),
      );
      fc.assert(
        fc.property(fc.array(fc.tuple(name, fc.string({ unit: 'binary', maxLength: 24 })), { maxLength: 6 }), (pairs) =>
          expectSuccessOr400(attempt(() => shell.query(schema, queryEvent(pairs)))),
        ),
        options(),
      );
    });

    it('valid queries generated from the schema are accepted', () => {
      fc.assert(
        fc.property(validFor(schema), (value) => {
          expect(attempt(() => shell.query(schema, queryEvent(queryPairs(value as Record<string, unknown>))))).toEqual({
            ok: true,
          });
        }),
        options(),
      );
    });

    it('each parameter given a wrong value, repeated, or as an array is a 400 naming it', () => {
      for (const key of names) {
        const entry = entriesOf(schema)[key]!;
        fc.assert(
          fc.property(validFor(schema), fc.constantFrom(...wrongTextsFor(entry), 'REPEAT', 'ARRAY'), (valid, bad) => {
            const pairs = queryPairs(valid as Record<string, unknown>).filter(([k]) => k !== key);
            const given: [string, string][] =
              bad === 'REPEAT'
                ? [
                    [key, 'a'],
                    [key, 'b'],
                  ]
                : bad === 'ARRAY'
                  ? [[`${key}[]`, 'a']]
                  : [[key, bad]];
            expectRefusal(
              attempt(() => shell.query(schema, queryEvent([...pairs, ...given]))),
              key,
            );
          }),
          options(8),
        );
      }
    });
  });

  describe.each(withParams)('path of $name', ({ spec }) => {
    const schema = spec.params!;
    const names = Object.keys(entriesOf(schema));

    it('any path value is accepted or refused with a 400 envelope; valid ones are accepted; wrong ones name the field', () => {
      const record = fc.record(Object.fromEntries(names.map((n) => [n, fc.string({ unit: 'binary', maxLength: 80 })])));
      fc.assert(
        fc.property(record, (params) => expectSuccessOr400(attempt(() => shell.path(schema, params)))),
        options(),
      );
      fc.assert(
        fc.property(validFor(schema), (params) => {
          expect(attempt(() => shell.path(schema, params as Record<string, string>))).toEqual({ ok: true });
        }),
        options(),
      );
      for (const key of names) {
        const wrong = wrongTextsFor(entriesOf(schema)[key]!);
        if (wrong.length === 0) continue; // any text is a valid value here (a free-form id)
        fc.assert(
          fc.property(validFor(schema), fc.constantFrom(...wrong), (valid, bad) =>
            expectRefusal(
              attempt(() => shell.path(schema, { ...(valid as Record<string, string>), [key]: bad })),
              key,
            ),
          ),
          options(8),
        );
      }
    });
  });
});
