// The OpenAPI 3.1 document, generated from the route tables and the valibot schemas each endpoint declares in
// its spec: adding an endpoint to a route table is all it takes to document it.
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { HttpMethod, RouteSpec } from './http.js';
import { STATUS_BY_KIND } from './errors.js';
import { ErrorEnvelopeSchema } from './schemas.js';

export interface DocumentedRoute {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: { readonly spec: RouteSpec };
  readonly streaming?: boolean;
}

type JsonObject = Record<string, unknown>;

const schemaOf = (schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonObject => {
  const { $schema: _ignored, ...json } = toJsonSchema(schema, { target: 'draft-2020-12', typeMode, errorMode: 'ignore' }) as JsonObject;
  return json;
};

const OPTIONAL = new Set(['optional', 'exact_optional', 'nullish', 'undefinedable']);

const parametersOf = (schema: v.GenericSchema | undefined, location: 'query' | 'path'): JsonObject[] => {
  const entries = (schema as { entries?: Record<string, v.GenericSchema> } | undefined)?.entries ?? {};
  return Object.entries(entries).map(([name, entry]) => ({
    name,
    in: location,
    required: location === 'path' || !OPTIONAL.has(entry.type),
    schema: schemaOf(entry, 'input'),
  }));
};

const ERROR_REF = { $ref: '#/components/schemas/ErrorEnvelope' };

const errorResponse = (description: string): JsonObject => ({
  description,
  content: { 'application/json': { schema: ERROR_REF } },
});

const operationOf = (route: DocumentedRoute): JsonObject => {
  const { spec } = route.handler;
  const responses: JsonObject = {};
  for (const [status, doc] of Object.entries(spec.responses)) {
    const contentType = doc.contentType ?? (route.streaming ? 'text/event-stream' : 'application/json');
    responses[status] = doc.schema === undefined && !route.streaming
      ? { description: doc.description }
      : { description: doc.description, content: { [contentType]: doc.schema === undefined ? {} : { schema: schemaOf(doc.schema, 'output') } } };
  }
  const hasInput = spec.body !== undefined || spec.query !== undefined || spec.params !== undefined;
  if (hasInput) responses['400'] ??= errorResponse('Invalid request (INVALID_BODY, VALIDATION_ERROR, MISSING_FIELD)');
  if (spec.permission !== 'public' && !route.streaming) {
    responses['401'] ??= errorResponse('Missing or invalid credential');
    responses['403'] ??= errorResponse('The caller lacks the permission');
  }
  responses[String(STATUS_BY_KIND.internal)] ??= errorResponse('Unexpected error (generic message)');
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: spec.tags,
    'x-permission': spec.permission,
    security: spec.permission === 'public' ? [] : route.streaming ? [{ sseToken: [] }] : spec.permission === 'agent' ? [{ agentToken: [] }] : [{ bearer: [] }],
    parameters: [...parametersOf(spec.params, 'path'), ...parametersOf(spec.query, 'query')],
    ...(spec.body === undefined
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(spec.body, 'input') } } } }),
    responses,
  };
};

export const buildOpenApi = (routes: readonly DocumentedRoute[], info: { version: string; serverUrl?: string }): JsonObject => {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Deployment Automation Service API',
      version: '1.0.0',
      'x-server-version': info.version,
    },
    ...(info.serverUrl === undefined ? {} : { servers: [{ url: info.serverUrl }] }),
    paths,
    components: {
      schemas: { ErrorEnvelope: schemaOf(ErrorEnvelopeSchema, 'output') },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A JWT access token or an API key (dpl_...)' },
        agentToken: { type: 'http', scheme: 'bearer', description: 'An agent token (dpa_...), from POST /api/v1/agent/register; only for /api/v1/agent/*' },
        sseToken: { type: 'apiKey', in: 'query', name: 'sse_token', description: 'Single-use token from POST /api/v1/auth/sse-token' },
      },
    },
  };
};
