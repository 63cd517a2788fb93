// The OpenAPI 3.1 document, generated from the route tables and the valibot schemas each endpoint declares in
// its spec: adding an endpoint to a route table is all it takes to document it.
//
// What the document guarantees (docs/errors.md "The OpenAPI document"): every operation lists every status it can
// answer, each with its content type and schema. On top of what a route declares, the shell's own answers are
// added to every operation: 400 (when it takes input), 401/403 (unless public), 404 (when it has path
// parameters), 413 (when it takes a body), 429 (the general limiter's plain text, plus the JSON envelope where the
// route declares a 429 of its own), 500, 503 and a `default` error envelope. Every 4xx/5xx body is the envelope
// (`#/components/schemas/ErrorEnvelope`) except the general limiter's plain-text 429.
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { HttpMethod, RouteSpec } from './http.js';
import { ErrorEnvelopeSchema } from './schemas.js';

export interface DocumentedRoute {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: { readonly spec: RouteSpec };
  readonly streaming?: boolean;
}

type JsonObject = Record<string, unknown>;

const schemaOf = (schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonObject => {
  const { $schema: _ignored, ...json } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    typeMode,
    errorMode: 'ignore',
  }) as JsonObject;
  return json;
};

const OPTIONAL = new Set(['optional', 'exact_optional', 'nullish', 'undefinedable']);

interface SchemaShape {
  readonly type: string;
  readonly wrapped?: SchemaShape;
  readonly default?: unknown;
  readonly pipe?: readonly { readonly type: string; readonly kind?: string; readonly requirement?: unknown }[];
}

const looksLikeIntegerPattern = (requirement: unknown): boolean =>
  requirement instanceof RegExp &&
  requirement.test('12') &&
  requirement.test('0') &&
  !requirement.test('1.5') &&
  !requirement.test('x');

/**
 * A query parameter as it is on the wire. Query values arrive as strings; a string that the schema checks to be
 * an integer and then transforms to a number (shared/schemas.ts QueryInt) is documented as `integer` with its
 * bounds and default, so a generated client sends numbers. Enums are listed once each.
 */
const wireSchemaOf = (entry: v.GenericSchema): JsonObject => {
  const shape = entry as unknown as SchemaShape;
  const inner = OPTIONAL.has(shape.type) && shape.wrapped !== undefined ? shape.wrapped : shape;
  const given = OPTIONAL.has(shape.type) ? shape.default : undefined;
  const actions = inner.pipe ?? [];
  const transforms = actions.some((a) => a.type === 'transform');
  const integer = actions.some((a) => a.type === 'regex' && looksLikeIntegerPattern(a.requirement));
  if (inner.pipe?.[0]?.type === 'string' && transforms && integer) {
    const bound = (type: string) =>
      actions.find((a) => a.type === type && typeof a.requirement === 'number')?.requirement;
    const regex = actions.find((a) => a.type === 'regex')?.requirement as RegExp;
    const minimum = bound('min_value') ?? (regex.test('-1') ? undefined : 0);
    const maximum = bound('max_value');
    return {
      type: 'integer',
      ...(minimum === undefined ? {} : { minimum }),
      ...(maximum === undefined ? {} : { maximum }),
      ...(typeof given === 'string' && /^-?\d+$/.test(given) ? { default: Number(given) } : {}),
    };
  }
  const json = schemaOf(entry, 'input');
  return Array.isArray(json['enum']) ? { ...json, enum: [...new Set(json['enum'] as unknown[])] } : json;
};

/** The Idempotency-Key header of an idempotent create (draft-ietf-httpapi-idempotency-key-header). */
const IDEMPOTENCY_KEY_PARAMETER: JsonObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A key (1 to 255 characters) the caller picks per request: a retry with the same key and the same request within 24 h answers the first 2xx again (with `idempotent-replayed: true`) without doing the work twice.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

const parametersOf = (schema: v.GenericSchema | undefined, location: 'query' | 'path'): JsonObject[] => {
  const entries = (schema as { entries?: Record<string, v.GenericSchema> } | undefined)?.entries ?? {};
  return Object.entries(entries).map(([name, entry]) => ({
    name,
    in: location,
    required: location === 'path' || !OPTIONAL.has(entry.type),
    schema: location === 'query' ? wireSchemaOf(entry) : schemaOf(entry, 'input'),
  }));
};

const ERROR_REF = { $ref: '#/components/schemas/ErrorEnvelope' };
const ENVELOPE_CONTENT = { 'application/json': { schema: ERROR_REF } };

/** The version header every agent call carries (absent: an agent from before it, judged as 1.0.0). */
const AGENT_VERSION_PARAMETER: JsonObject = {
  name: 'x-deployer-agent-version',
  in: 'header',
  required: false,
  description:
    'The agent’s semantic version; another major version than the server’s is refused (409 AGENT_VERSION_INCOMPATIBLE), none counts as 1.0.0',
  schema: { type: 'string', maxLength: 64 },
};

const errorResponse = (description: string, headers?: JsonObject): JsonObject => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: ENVELOPE_CONTENT,
});

const RETRY_AFTER = { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } };

/** The general limiter's answer (functions/shared/http.ts tooManyRequests): plain text on every operation. */
const PLAIN_429 = {
  'text/plain': {
    schema: { type: 'string', description: 'A sentence asking to slow down and retry after Retry-After seconds' },
  },
};
const HEADERS_429 = {
  'Retry-After': RETRY_AFTER,
  'X-RateLimit-Remaining': { description: 'Always 0 on a 429', schema: { type: 'integer', const: 0 } },
};

const contentOf = (
  route: DocumentedRoute,
  status: number,
  doc: RouteSpec['responses'][number],
): JsonObject | undefined => {
  if (status >= 400) {
    // An error a route describes is the envelope, whatever schema it names; except a page (the OAuth authorization
    // page answers its errors as HTML, for the browser that shows them), which names its content type.
    if (doc.contentType !== undefined && doc.schema !== undefined)
      return { [doc.contentType]: { schema: schemaOf(doc.schema, 'output') } };
    return ENVELOPE_CONTENT;
  }
  if (route.streaming && status < 300) {
    const type = doc.contentType ?? 'text/event-stream';
    return {
      [type]: {
        schema: {
          type: 'string',
          description: 'Server-Sent Events: `id:` and `data:` lines, one JSON {event, data} per message',
        },
      },
    };
  }
  if (doc.schema === undefined) return undefined;
  return { [doc.contentType ?? 'application/json']: { schema: schemaOf(doc.schema, 'output') } };
};

const operationOf = (route: DocumentedRoute): JsonObject => {
  const { spec } = route.handler;
  const responses: JsonObject = {};
  for (const [key, doc] of Object.entries(spec.responses)) {
    const status = Number(key);
    const content = contentOf(route, status, doc);
    responses[key] =
      content === undefined ? { description: doc.description } : { description: doc.description, content };
  }
  const hasInput = spec.body !== undefined || spec.query !== undefined || spec.params !== undefined;
  if (hasInput) responses['400'] ??= errorResponse('Invalid request (INVALID_BODY, VALIDATION_ERROR, MISSING_FIELD)');
  if (spec.permission !== 'public') {
    responses['401'] ??= errorResponse('Missing or invalid credential');
    responses['403'] ??= errorResponse('The caller lacks the permission');
  }
  if (spec.params !== undefined)
    responses['404'] ??= errorResponse('NOT_FOUND: no such record (or not visible to the caller)');
  if (spec.permission === 'agent') {
    // Every agent call: an agent of another major version than the server's is refused (x-deployer-agent-version).
    const refusal = `AGENT_VERSION_INCOMPATIBLE: the agent's major version (x-deployer-agent-version) is not the server's; details {agent_version, accepted, server_version}`;
    const own = responses['409'] as { description?: string } | undefined;
    responses['409'] = errorResponse(own?.description === undefined ? refusal : `${own.description}; or ${refusal}`);
  }
  if (spec.idempotent === true) {
    // Idempotency-Key (functions/shared/idempotency.ts): a request in flight with the same key, or the key reused.
    const inFlight = 'CONFLICT: a request with the same Idempotency-Key is still in progress';
    const own = responses['409'] as { description?: string } | undefined;
    responses['409'] = errorResponse(own?.description === undefined ? inFlight : `${own.description}; or ${inFlight}`);
    responses['422'] ??= errorResponse(
      'VALIDATION_ERROR: the Idempotency-Key was already used by this caller for another request (method, path or body)',
    );
  }
  if (spec.body !== undefined)
    responses['413'] ??= errorResponse(
      'VALIDATION_ERROR with details.limit_bytes: the body is larger than the service takes (8 MiB)',
    );
  // 429: the general limiter answers plain text on every operation; a route that declares its own 429 (a login
  // lockout) answers the JSON envelope too.
  const own429 = spec.responses[429] !== undefined && !route.streaming;
  responses['429'] = {
    description: own429
      ? `${spec.responses[429]?.description ?? ''}: the JSON envelope; or the general rate limit: plain text`
      : 'The general rate limit (plain text)' +
        (route.streaming ? ', or too many event streams open for the caller' : ''),
    headers: HEADERS_429,
    content: own429 ? { ...PLAIN_429, ...ENVELOPE_CONTENT } : PLAIN_429,
  };
  responses['500'] ??= errorResponse(
    'INTERNAL_ERROR, DATABASE_ERROR, DATABASE_CONNECTION_ERROR: unexpected error (generic message, details.request_id); ' +
      'CONFIGURATION_ERROR: the service is not configured (names the settings); ' +
      'EXTERNAL_SERVICE_ERROR: a service called on the caller’s behalf failed',
  );
  responses['503'] ??= errorResponse(
    'SERVICE_UNAVAILABLE: the service is busy (throttled), the message queue cannot be reached, or the rate limits cannot be checked (auth routes)',
    { 'Retry-After': RETRY_AFTER },
  );
  responses['default'] = errorResponse('Any other error, in the envelope');
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: spec.tags,
    'x-permission': spec.permission,
    security:
      spec.permission === 'public'
        ? []
        : route.streaming
          ? [{ sseToken: [] }]
          : spec.permission === 'agent'
            ? [{ agentToken: [] }]
            : [{ bearer: [] }],
    parameters: [
      ...parametersOf(spec.params, 'path'),
      ...parametersOf(spec.query, 'query'),
      ...(spec.idempotent === true ? [IDEMPOTENCY_KEY_PARAMETER] : []),
      ...(spec.permission === 'agent' ? [AGENT_VERSION_PARAMETER] : []),
    ],
    ...(spec.body === undefined ? {} : { requestBody: requestBodyOf(spec.body) }),
    responses,
  };
};

/** `required: false` when the body may be absent (a body schema that accepts undefined, such as redeploy's). */
const requestBodyOf = (body: v.GenericSchema): JsonObject => {
  const optional = OPTIONAL.has(body.type);
  return { required: !optional, content: { 'application/json': { schema: schemaOf(body, 'input') } } };
};

/**
 * The document. `servers` always has one entry: `serverUrl` when given, else `/` (relative: the document is served
 * by the API it describes, so its own origin is the server).
 */
export const buildOpenApi = (
  routes: readonly DocumentedRoute[],
  info: { version: string; serverUrl?: string },
): JsonObject => {
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
    servers: [{ url: info.serverUrl ?? '/' }],
    paths,
    components: {
      schemas: { ErrorEnvelope: errorEnvelopeJson() },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A JWT access token or an API key (dpl_...)' },
        agentToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'An agent token (dpa_...), from POST /api/v1/agent/register; only for /api/v1/agent/*',
        },
        sseToken: {
          type: 'apiKey',
          in: 'query',
          name: 'sse_token',
          description: 'Single-use token from POST /api/v1/auth/sse-token',
        },
      },
    },
  };
};

/** The envelope; `error` may carry more members than code, message and details (retry_after_secs, reason). */
const errorEnvelopeJson = (): JsonObject => {
  const json = schemaOf(ErrorEnvelopeSchema, 'output');
  return {
    ...json,
    description:
      'Every error answer: {error: {code, message, details?}}; error may carry further members (for example retry_after_secs and reason on AUTH_RATE_LIMIT_EXCEEDED)',
  };
};
