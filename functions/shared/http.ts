// The middy stack every HTTP endpoint shares: request id and access log, error envelope, header normalisation,
// JSON body, valibot validation of body / query / path, then the endpoint's function; its result is rendered.
//
// Each endpoint file calls `http(spec, fn)`. The spec (operation id, permission, schemas, documented
// responses) is the single place the route is described: the router, the OpenAPI document and the route
// tests all read it from the exported handler.
import { randomUUID } from 'node:crypto';
import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { InvalidBodyError, PayloadTooLargeError, ValidationError } from '../../domain/errors.js';
import { authorize } from '../../domain/identity/authenticate.js';
import { ForbiddenError } from '../../domain/identity/errors.js';
import type { Permission } from '../../domain/identity/permissions.js';
import type { RateDecision } from '../../domain/identity/ports.js';
import type { Caller } from '../../domain/identity/types.js';
import type { AgentCaller } from '../../domain/targets/types.js';
import { renderError } from './errors.js';
import { logger } from './logger.js';
import { parseWith } from './validation.js';
import { clientIp } from './client-ip.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export interface ResponseDoc {
  readonly description: string;
  readonly schema?: Schema;
  /** Defaults to application/json when a schema is given. */
  readonly contentType?: string;
}

export interface RouteSpec<B extends Schema | undefined = Schema | undefined, Q extends Schema | undefined = Schema | undefined, P extends Schema | undefined = Schema | undefined> {
  readonly operationId: string;
  readonly summary: string;
  readonly tags: readonly string[];
  /**
   * `public`; `authenticated` (any valid user credential); the permission (`<resource>:<action>`) a user caller
   * needs; or `agent`: an agent token and nothing else (the agent protocol under /api/v1/agent/*).
   */
  readonly permission: 'public' | 'authenticated' | 'agent' | Permission;
  /** `user`: only a user's access token, not an API key (for example creating API keys). */
  readonly credentials?: 'user';
  readonly body?: B;
  readonly query?: Q;
  readonly params?: P;
  readonly responses: Readonly<Record<number, ResponseDoc>>;
}

export interface HttpRequest<B, Q, P, C = Caller> {
  /** Who is calling; undefined only on public endpoints. */
  readonly caller: C;
  readonly cookies: Readonly<Record<string, string>>;
  readonly method: string;
  readonly path: string;
  readonly body: B;
  readonly query: Q;
  readonly params: P;
  readonly requestId: string;
  readonly sourceIp: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
}

/** What an endpoint returns: `body` undefined is an empty body, a string is sent as is, anything else as JSON. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Set-Cookie values (payload 2.0 `cookies`). */
  readonly cookies?: readonly string[];
}

export type LambdaHttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface HttpEndpoint extends LambdaHttpHandler {
  readonly spec: RouteSpec;
}

export const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

const JSON_TYPE = 'application/json; charset=utf-8';

interface Timed {
  requestId: string;
  started: number;
}
const timings = new WeakMap<object, Timed>();

/** Assigns the request id, adds it to every response and log line, and writes one access log line. */
export const requestLog = (): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> => {
  const finish = (request: middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>): void => {
    const timed = timings.get(request.event);
    const response = request.response;
    if (timed === undefined || response === undefined || response === null) return;
    response.headers = { ...response.headers, 'x-request-id': timed.requestId };
    logger.info('request', {
      method: request.event.requestContext?.http?.method,
      path: request.event.rawPath,
      status: response.statusCode,
      duration_ms: Date.now() - timed.started,
    });
    logger.removeKeys(['request_id']);
  };
  return {
    before: function assignRequestId(request) {
      // Lambda's request id: unique per invocation in the cloud and locally (serverless-offline gives every
      // request the same API Gateway requestId), and the id in the function's own log lines.
      const requestId = request.context?.awsRequestId || randomUUID();
      timings.set(request.event, { requestId, started: Date.now() });
      logger.appendKeys({ request_id: requestId });
    },
    after: finish,
    onError: finish,
  };
};

/** Renders any error as the spec's envelope; runs last on the way out so nothing escapes as a raw 500. */
export const errorEnvelope = (): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> => ({
  onError: function renderErrorEnvelope(request) {
    const requestId = timings.get(request.event)?.requestId ?? randomUUID();
    const { statusCode, body, headers } = renderError(request.error, requestId);
    request.response = {
      statusCode,
      headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, ...headers },
      body: JSON.stringify(body),
    };
  },
});

/**
 * The largest request body taken (bytes, after base64 decoding): 8 MiB, above the agent's largest output batch
 * (100 chunks of up to 64 KiB, JSON-escaped) and far above any other body. API Gateway's own limit is 10 MB.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export const readBody = (event: APIGatewayProxyEventV2): unknown => {
  // API Gateway always passes the body as text; serverless-offline passes an already-parsed JSON scalar
  // (`0`, `false`) for `application/json` requests: read it back as the text it was.
  const body: unknown = event.body;
  if (body === undefined || body === null || body === '') return undefined;
  const given = typeof body === 'string' ? body : JSON.stringify(body);
  const size = event.isBase64Encoded ? Math.floor((given.length * 3) / 4) : Buffer.byteLength(given, 'utf8');
  if (size > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const text = event.isBase64Encoded ? Buffer.from(given, 'base64').toString('utf8') : given;
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidBodyError();
  }
};

const NOT_AN_OBJECT = 'The body must be a JSON object.';

export const parseBody = (schema: Schema, event: APIGatewayProxyEventV2): unknown => {
  const raw = readBody(event);
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
 * ignored as before.
 */
export const parseQuery = (schema: Schema, event: APIGatewayProxyEventV2): unknown => {
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
    throw new ValidationError(`Invalid query: ${repeated.join(', ')}.`, repeated.map((name) => ({
      field: name, code: 'VALIDATION_ERROR', message: `${name} takes a single value (given more than once or as an array).`,
    })));
  }
  return parseWith(schema, event.queryStringParameters ?? {}, 'query');
};

export const renderResult = (result: HttpResult): APIGatewayProxyStructuredResultV2 => {
  const rendered = renderBody(result);
  return result.cookies === undefined ? rendered : { ...rendered, cookies: [...result.cookies] };
};

const renderBody = (result: HttpResult): APIGatewayProxyStructuredResultV2 => {
  if (result.body === undefined) return { statusCode: result.statusCode, headers: { ...BASE_HEADERS, ...result.headers }, body: '' };
  if (typeof result.body === 'string') {
    return { statusCode: result.statusCode, headers: { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...result.headers }, body: result.body };
  }
  return {
    statusCode: result.statusCode,
    headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, ...result.headers },
    body: JSON.stringify(result.body),
  };
};

/** Authorization header value and client address -> the caller, or a domain error (401/403 codes of the spec). */
export type Authenticator = (authorization: string | undefined, ip: string) => Promise<Caller>;

export interface HttpOptions {
  /** Defaults to the service's own (functions/shared/wiring.ts); tests pass theirs. */
  readonly authenticate?: Authenticator;
  readonly authenticateAgent?: AgentAuthenticator;
  readonly rateGate?: RateGate;
}

/** Client address -> whether the general rate limit (per address, shared by every instance) lets it through. */
export type RateGate = (ip: string) => Promise<RateDecision>;

let defaultRateGate: (() => RateGate) | undefined;
/** Set once by the composition root. */
export const useDefaultRateGate = (make: () => RateGate): void => {
  defaultRateGate = make;
};

/** The spec's general-limiter answer: 429, plain text, Retry-After and X-RateLimit-Remaining: 0. */
const tooManyRequests = (decision: RateDecision): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 429,
  headers: {
    ...BASE_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'retry-after': String(Math.max(1, decision.retryAfterSeconds)),
    'x-ratelimit-remaining': '0',
  },
  body: 'Too Many Requests: slow down and retry after the Retry-After seconds.',
});

/** Fails open: when the limiter's store cannot answer, the request goes through (and the failure is logged). */
const rateLimited = async (event: APIGatewayProxyEventV2, options: HttpOptions): Promise<APIGatewayProxyStructuredResultV2 | undefined> => {
  try {
    const gate = options.rateGate ?? defaultRateGate?.();
    if (gate === undefined) return undefined;
    const decision = await gate(clientIp(event));
    return decision.allowed ? undefined : tooManyRequests(decision);
  } catch (error) {
    logger.warn('rate limiter unavailable; request allowed', { error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
};

/** Authorization header value -> the agent, or a domain error (401 codes of the spec). */
export type AgentAuthenticator = (authorization: string | undefined) => Promise<AgentCaller>;

let defaultAgentAuthenticator: (() => AgentAuthenticator) | undefined;
/** Set once by the composition root of the agent endpoints. */
export const useDefaultAgentAuthenticator = (make: () => AgentAuthenticator): void => {
  defaultAgentAuthenticator = make;
};

let defaultAuthenticator: (() => Authenticator) | undefined;
/** Set once by the composition root, so this module does not import the infrastructure. */
export const useDefaultAuthenticator = (make: () => Authenticator): void => {
  defaultAuthenticator = make;
};

const authenticateFor = async (spec: RouteSpec, event: APIGatewayProxyEventV2, options: HttpOptions): Promise<Caller | AgentCaller | undefined> => {
  if (spec.permission === 'public') return undefined;
  if (spec.permission === 'agent') {
    const authenticateAgent = options.authenticateAgent ?? defaultAgentAuthenticator?.();
    if (authenticateAgent === undefined) throw new Error('no agent authenticator is wired');
    return authenticateAgent(event.headers?.['authorization']);
  }
  const authenticate = options.authenticate ?? defaultAuthenticator?.();
  if (authenticate === undefined) throw new Error('no authenticator is wired');
  const caller = await authenticate(event.headers?.['authorization'], clientIp(event));
  if (spec.permission !== 'authenticated') authorize(caller, spec.permission);
  if (spec.credentials === 'user' && caller.kind !== 'user') throw new ForbiddenError('This needs a user login; API keys cannot do it.', { reason: 'user_credentials_required' });
  return caller;
};

/** Cookies of a payload 2.0 event (API Gateway puts them in `cookies`, not the header). */
export const readCookies = (event: APIGatewayProxyEventV2): Record<string, string> => {
  const pairs = event.cookies ?? (event.headers?.['cookie'] ?? '').split(';');
  const cookies: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at > 0) cookies[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return cookies;
};

type CallerOf<S> = S extends { permission: 'public' } ? undefined : S extends { permission: 'agent' } ? AgentCaller : Caller;

export const http = <
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
  S extends RouteSpec<B, Q, P> = RouteSpec<B, Q, P>,
>(
  spec: S & RouteSpec<B, Q, P>,
  fn: (request: HttpRequest<Out<B>, Out<Q>, Out<P>, CallerOf<S>>) => Promise<HttpResult>,
  options: HttpOptions = {},
): HttpEndpoint => {
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(requestLog())
    .use(errorEnvelope())
    .use(httpHeaderNormalizer())
    .handler(async function endpoint(event) {
      const limited = await rateLimited(event, options);
      if (limited !== undefined) return limited;
      const caller = await authenticateFor(spec as RouteSpec, event, options);
      const request: HttpRequest<Out<B>, Out<Q>, Out<P>, CallerOf<S>> = {
        caller: caller as CallerOf<S>,
        cookies: readCookies(event),
        method: event.requestContext?.http?.method ?? '',
        path: event.rawPath,
        body: (spec.body === undefined ? undefined : parseBody(spec.body, event)) as Out<B>,
        query: (spec.query === undefined ? undefined : parseQuery(spec.query, event)) as Out<Q>,
        params: (spec.params === undefined ? undefined : parseWith(spec.params, event.pathParameters ?? {}, 'path')) as Out<P>,
        requestId: timings.get(event)?.requestId ?? randomUUID(),
        sourceIp: clientIp(event),
        headers: event.headers ?? {},
      };
      return renderResult(await fn(request));
    });
  return Object.assign(handler as unknown as LambdaHttpHandler, { spec: spec as RouteSpec });
};
