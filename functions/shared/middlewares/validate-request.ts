// Body, query and path parameters against the route's schemas (valibot), into what the endpoint receives.
import * as v from 'valibot';
import { ValidationError } from '../../../domain/errors.js';
import { parseWith } from '../validation.js';
import { requestState, type Event, type Middleware } from './request-state.js';

type Schema = v.GenericSchema;

const NOT_AN_OBJECT = 'The body must be a JSON object.';

/** The parsed body against the route's schema: absent only where the schema allows, an object, every field valid. */
export const validBody = (schema: Schema, raw: unknown): unknown => {
  if (raw === undefined && !v.safeParse(schema, undefined).success) {
    throw new ValidationError('A JSON body is required.', [
      { field: 'body', code: 'MISSING_FIELD', message: 'A JSON body is required.' },
    ]);
  }
  // Every body the spec shows is an object: `0`, `false`, `"x"`, `null` or `[]` is refused here, before any schema
  // (or a refinement written for objects) sees it.
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
    throw new ValidationError(NOT_AN_OBJECT, [{ field: 'body', code: 'VALIDATION_ERROR', message: NOT_AN_OBJECT }]);
  }
  return parseWith(schema, raw, 'body');
};

/** The names a query schema knows (its object entries), or none. */
const queryNames = (schema: Schema): readonly string[] => {
  const shape = schema as { entries?: Record<string, unknown>; pipe?: readonly Schema[]; wrapped?: Schema };
  if (shape.entries !== undefined) return Object.keys(shape.entries);
  const inner = shape.pipe?.[0] ?? shape.wrapped;
  return inner === undefined || inner === schema ? [] : queryNames(inner);
};

/**
 * Query parameters: each one the route knows takes a single value. Repeated (`?wait=1&wait=2`, which API Gateway
 * would join as `1,2`) or array-style (`?wait[]=1`) forms of a known name are a 400 naming it; unknown names are
 * ignored.
 */
export const parseQuery = (schema: Schema, event: Event): unknown => {
  const known = new Set(queryNames(schema));
  const counts = new Map<string, number>();
  for (const key of new URLSearchParams(event.rawQueryString ?? '').keys()) {
    const bracket = key.indexOf('[');
    const name = bracket === -1 ? key : key.slice(0, bracket);
    if (!known.has(name)) continue;
    counts.set(name, (counts.get(name) ?? 0) + (bracket === -1 ? 1 : 2));
  }
  const repeated = [...counts].filter(([, count]) => count > 1).map(([name]) => name);
  if (repeated.length > 0) {
    throw new ValidationError(
      `Invalid query: ${repeated.join(', ')}.`,
      repeated.map((name) => ({
        field: name,
        code: 'VALIDATION_ERROR',
        message: `${name} takes a single value (given more than once or as an array).`,
      })),
    );
  }
  return parseWith(schema, event.queryStringParameters ?? {}, 'query');
};

/** The route's schemas: body, query and path parameters, each validated into what the endpoint receives. */
export interface InputSchemas {
  readonly body?: Schema | undefined;
  readonly query?: Schema | undefined;
  readonly params?: Schema | undefined;
}

/** Validates body, query and path against the route's schemas (400 naming every bad field). */
export const validateRequest = (schemas: InputSchemas): Middleware => ({
  before: function validateInput(request) {
    const state = requestState(request.context);
    const { event } = request;
    const input = {
      body: schemas.body === undefined ? undefined : validBody(schemas.body, state?.body),
      query: schemas.query === undefined ? undefined : parseQuery(schemas.query, event),
      params: schemas.params === undefined ? undefined : parseWith(schemas.params, event.pathParameters ?? {}, 'path'),
    };
    if (state !== undefined) state.input = input;
  },
});
