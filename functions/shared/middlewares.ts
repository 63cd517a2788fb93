// The named middy middlewares every HTTP and streaming endpoint is made of (functions/shared/shell.ts puts them
// in order). Each takes what it needs as arguments: nothing here reads a module-level default, so an endpoint
// bound without an authenticator does not compile (shell.ts) instead of failing at request time.
//
// Order of a chain, outermost first: requestLog, cors, securityHeaders, errorEnvelope, renderResponse,
// httpHeaderNormalizer, startupGate, rateLimit, authentication, jsonBody, validateRequest, the endpoint.
// Gates refuse by throwing: middy skips every `after` when a `before` returns early, and the outer middlewares
// (request id, CORS, security headers) must dress every answer, refusals included.
import { randomUUID } from 'node:crypto';
import type middy from '@middy/core';
import type { MiddlewareObj } from '@middy/core';
import httpCors from '@middy/http-cors';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import httpSecurityHeaders from '@middy/http-security-headers';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import * as v from 'valibot';
import { ConfigurationError, InvalidBodyError, PayloadTooLargeError, ValidationError } from '../../domain/errors.js';
import { authorize } from '../../domain/identity/authenticate.js';
import { requireUserSession } from '../../domain/identity/delegation.js';
import type { RateDecision } from '../../domain/identity/ports.js';
import type { Caller } from '../../domain/identity/types.js';
import type { AgentCaller } from '../../domain/targets/types.js';
import { clientIp } from './client-ip.js';
import type { CorsSettings } from './cors.js';
import { envelope, renderError } from './errors.js';
import { logger } from './logger.js';
import { parseWith } from './validation.js';

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;
export type Middleware = MiddlewareObj<Event, Result>;
type Request = middy.Request<Event, Result>;
type Schema = v.GenericSchema;

/** Authorization header value and client address -> the caller, or a domain error (401/403 codes of the spec). */
export type Authenticator = (authorization: string | undefined, ip: string) => Promise<Caller>;
/**
 * Authorization header value and the request's headers (the agent's version) -> the agent, or a domain error (401
 * codes of the spec; 409 AGENT_VERSION_INCOMPATIBLE for an agent of another major version).
 */
export type AgentAuthenticator = (
  authorization: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
) => Promise<AgentCaller>;
/** Client address -> whether the general rate limit (per address, shared by every instance) lets it through. */
export type RateGate = (ip: string) => Promise<RateDecision>;

export const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export const JSON_TYPE = 'application/json; charset=utf-8';

/** What an endpoint returns: `body` undefined is an empty body, a string is sent as is, anything else as JSON. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Set-Cookie values (payload 2.0 `cookies`). */
  readonly cookies?: readonly string[];
}

/** A finished answer thrown by a gate (the general limiter's plain-text 429): rendered as is. */
export class ShellAnswer extends Error {
  constructor(readonly response: Result) {
    super(`answered ${response.statusCode}`);
    this.name = 'ShellAnswer';
  }
}

// ---- what the middlewares learn about a request, shared along the chain --------------------------------------

interface RequestState {
  requestId: string;
  started: number;
  caller?: Caller | AgentCaller;
  body?: unknown;
  input?: { body: unknown; query: unknown; params: unknown };
}
const states = new WeakMap<object, RequestState>();

/** The request id and the parsed parts of a request (undefined before requestLog ran). */
export const requestState = (event: Event): RequestState | undefined => states.get(event);

// ---- request id and access log ---------------------------------------------------------------------------------

/** Assigns the request id, adds it to every response and log line, and writes one access log line. */
export const requestLog = (): Middleware => {
  const finish = (request: Request): void => {
    const state = states.get(request.event);
    const response = request.response;
    if (state === undefined || response === undefined || response === null) return;
    response.headers = { ...response.headers, 'x-request-id': state.requestId };
    logger.info('request', {
      // Named here too: locally several requests of one function run interleaved in one process (decisions.md).
      request_id: state.requestId,
      method: request.event.requestContext?.http?.method,
      path: request.event.rawPath,
      status: response.statusCode,
      duration_ms: Date.now() - state.started,
    });
    logger.removeKeys(['request_id']);
  };
  return {
    before: function assignRequestId(request) {
      // Lambda's request id: unique per invocation in the cloud and locally (serverless-offline gives every
      // request the same API Gateway requestId), and the id in the function's own log lines.
      const requestId = request.context?.awsRequestId || randomUUID();
      states.set(request.event, { requestId, started: Date.now() });
      logger.appendKeys({ request_id: requestId });
    },
    after: finish,
    onError: finish,
  };
};

// ---- error envelope -------------------------------------------------------------------------------------------

/** Renders any error as the spec's envelope, so nothing escapes as a raw 500. */
export const errorEnvelope = (): Middleware => ({
  onError: function renderErrorEnvelope(request) {
    if (request.error instanceof ShellAnswer) {
      request.response = request.error.response;
      return;
    }
    const requestId = states.get(request.event)?.requestId ?? randomUUID();
    const { statusCode, body, headers } = renderError(request.error, requestId);
    request.response = {
      statusCode,
      headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, ...headers },
      body: JSON.stringify(body),
    };
  },
});

// ---- CORS and security headers --------------------------------------------------------------------------------

/**
 * CORS for browser clients (@middy/http-cors): only the configured origins get `Access-Control-Allow-Origin`,
 * always with credentials (the refresh cookie); a preflight (OPTIONS) is answered 204 by the router (shell.ts).
 */
export const cors = (settings: CorsSettings): Middleware => {
  // No browser origin is allowed: no CORS header on any answer.
  if (settings.origins.length === 0) return { after: function noCorsOrigin() {} };
  const inner = httpCors({
    origins: [...settings.origins],
    credentials: true,
    methods: settings.methods.join(','),
    headers: settings.allowHeaders.join(','),
    exposeHeaders: settings.exposeHeaders.join(','),
    maxAge: settings.maxAgeSeconds,
    requestHeaders: [...settings.allowHeaders],
    requestMethods: [...settings.methods] as ('GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS')[],
    disableBeforePreflightResponse: false,
  }) as Middleware;
  // @middy/http-cors sends Allow-Credentials (and the methods and headers) even when the origin is not allowed:
  // without an Allow-Origin they are noise, so they go.
  const onlyForAllowed = (response: Result | undefined | null): void => {
    const headers = response?.headers;
    if (headers === undefined || headers === null || 'Access-Control-Allow-Origin' in headers) return;
    for (const name of Object.keys(headers)) if (name.toLowerCase().startsWith('access-control-')) delete headers[name];
  };
  return {
    before: async function corsPreflight(request) {
      const answer = (await inner.before?.(request)) as Result | undefined;
      onlyForAllowed(answer ?? request.response);
      return answer;
    },
    after: async function corsHeaders(request) {
      await inner.after?.(request);
      onlyForAllowed(request.response);
    },
    // Only dress a response that exists (an error already rendered by errorEnvelope).
    onError: async function corsOnError(request) {
      if (request.response === undefined || request.response === null) return;
      await inner.after?.(request);
      onlyForAllowed(request.response);
    },
  };
};

/**
 * The security headers of every answer (@middy/http-security-headers, API-appropriate settings): computed once,
 * then added under the endpoint's own headers (the docs page keeps its own Content-Security-Policy).
 */
export const securityHeaders = (): Middleware => {
  const inner = httpSecurityHeaders({
    contentSecurityPolicy: {
      'default-src': "'none'",
      'frame-ancestors': "'none'",
      'base-uri': "'none'",
      'form-action': "'none'",
    },
    crossOriginEmbedderPolicy: false, // an API answer embeds nothing
    crossOriginResourcePolicy: { policy: 'same-site' },
    permissionsPolicy: false,
    reportTo: false,
    reportingEndpoints: false,
  }) as Middleware;
  const scratch = {
    event: {},
    context: {},
    response: { statusCode: 200, headers: {} },
    error: null,
    internal: {},
  } as unknown as Request;
  void inner.after?.(scratch);
  const computed = Object.fromEntries(
    Object.entries(scratch.response?.headers ?? {}).map(([k, value]) => [k.toLowerCase(), String(value)]),
  );
  const dress = (request: Request): void => {
    const response = request.response;
    if (response === undefined || response === null) return;
    response.headers = { ...computed, ...response.headers };
  };
  return { after: dress, onError: dress };
};

// ---- rendering ------------------------------------------------------------------------------------------------

const rendered = new WeakSet<object>();

export const renderResult = (result: HttpResult): Result => {
  const answer = renderBody(result);
  const complete = result.cookies === undefined ? answer : { ...answer, cookies: [...result.cookies] };
  rendered.add(complete);
  return complete;
};

const renderBody = (result: HttpResult): Result => {
  if (result.body === undefined)
    return { statusCode: result.statusCode, headers: { ...BASE_HEADERS, ...result.headers }, body: '' };
  if (typeof result.body === 'string') {
    return {
      statusCode: result.statusCode,
      headers: { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...result.headers },
      body: result.body,
    };
  }
  return {
    statusCode: result.statusCode,
    headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, ...result.headers },
    body: JSON.stringify(result.body),
  };
};

/** The endpoint's HttpResult -> API Gateway's structured result (JSON, text or empty body; cookies). */
export const renderResponse = (): Middleware => ({
  after: function renderHttpResult(request) {
    const response = request.response as unknown;
    if (response === undefined || response === null || rendered.has(response)) return;
    request.response = renderResult(response as HttpResult);
  },
});

// ---- gates ----------------------------------------------------------------------------------------------------

/** A 503 in the spec's envelope, with Retry-After. */
export const serviceUnavailable = (message: string, retryAfterSeconds: number): Result => ({
  statusCode: 503,
  headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, 'retry-after': String(retryAfterSeconds) },
  body: JSON.stringify(envelope('SERVICE_UNAVAILABLE', message)),
});

/**
 * The spec's CONFIGURATION_ERROR (500) naming the settings that are missing or invalid: no Retry-After, since a
 * retry does not help until an operator sets them (docs/errors.md).
 */
export const configurationError = (problems: readonly string[]): Result => ({
  statusCode: 500,
  headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE },
  body: JSON.stringify(envelope('CONFIGURATION_ERROR', `The service is not configured: ${problems.join('; ')}.`)),
});

/** 500 CONFIGURATION_ERROR naming what is missing, while the cold start's configuration is incomplete (`check` answers the gaps). */
export const startupGate = (check: () => readonly string[]): Middleware => ({
  before: function refuseIncompleteConfiguration() {
    const problems = check();
    if (problems.length > 0) throw new ShellAnswer(configurationError(problems));
  },
});

/** The spec's general-limiter answer: 429, plain text, Retry-After and X-RateLimit-Remaining: 0. */
const tooManyRequests = (decision: RateDecision): Result => ({
  statusCode: 429,
  headers: {
    ...BASE_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'retry-after': String(Math.max(1, decision.retryAfterSeconds)),
    'x-ratelimit-remaining': '0',
  },
  body: 'Too Many Requests: slow down and retry after the Retry-After seconds.',
});

/** Seconds an auth route asks the client to wait when the limiter's store is down. */
export const LIMITER_DOWN_RETRY_SECONDS = 5;

/**
 * The general rate limit per client address. Fails open: when the limiter's store cannot answer, the request goes
 * through (and the failure is logged); except with `limiterDown: 'refuse'` (the auth routes: guessing passwords
 * must not get faster when the store fails), which answers 503 with Retry-After. A configuration that does not
 * parse is not a store failure: it answers 500 CONFIGURATION_ERROR everywhere (a retry would not help).
 */
export const rateLimit = (gate: RateGate, options: { readonly limiterDown?: 'refuse' } = {}): Middleware => ({
  before: async function applyRateLimit(request) {
    let decision: RateDecision;
    try {
      decision = await gate(clientIp(request.event));
    } catch (error) {
      if (error instanceof ConfigurationError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      if (options.limiterDown === 'refuse') {
        logger.warn('rate limiter unavailable; auth request refused', { error: message });
        throw new ShellAnswer(
          serviceUnavailable(
            'The service cannot check its rate limits right now; retry shortly.',
            LIMITER_DOWN_RETRY_SECONDS,
          ),
        );
      }
      logger.warn('rate limiter unavailable; request allowed', { error: message });
      return;
    }
    if (!decision.allowed) throw new ShellAnswer(tooManyRequests(decision));
  },
});

// ---- authentication -------------------------------------------------------------------------------------------

/** Who may call: a user credential with a permission (or any), `user` credentials only (no API key), or an agent. */
export type Access =
  | {
      readonly kind: 'user';
      readonly authenticate: Authenticator;
      readonly permission: 'authenticated' | Parameters<typeof authorize>[1];
      readonly userOnly: boolean;
    }
  | { readonly kind: 'agent'; readonly authenticateAgent: AgentAuthenticator };

/** Authenticates the caller (and checks the permission) before anything reads the request's input. */
export const authentication = (access: Access): Middleware => ({
  before: async function authenticateCaller(request) {
    const state = states.get(request.event);
    const authorization = request.event.headers?.['authorization'];
    if (access.kind === 'agent') {
      const agent = await access.authenticateAgent(authorization, request.event.headers ?? {});
      if (state !== undefined) state.caller = agent;
      return;
    }
    const caller = await access.authenticate(authorization, clientIp(request.event));
    if (access.permission !== 'authenticated') authorize(caller, access.permission);
    if (access.userOnly) requireUserSession(caller, 'This');
    if (state !== undefined) state.caller = caller;
  },
});

// ---- the body -------------------------------------------------------------------------------------------------

/**
 * The largest request body taken (bytes, after base64 decoding): 8 MiB, above the agent's largest output batch
 * (100 chunks of up to 64 KiB, JSON-escaped) and far above any other body. API Gateway's own limit is 10 MB.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

// Any content type is read as JSON (`curl -d` sends application/x-www-form-urlencoded); `__proto__` and
// `constructor.prototype` keys are refused by the parser.
const jsonParser = httpJsonBodyParser({ disableContentTypeCheck: true }) as Middleware;

/**
 * The JSON body of a request: undefined when absent or blank, the parsed value otherwise (413 above
 * MAX_BODY_BYTES, 400 INVALID_BODY when it is not JSON). Parsed by @middy/http-json-body-parser.
 */
export const readBody = (event: Event): unknown => {
  // API Gateway always passes the body as text; serverless-offline passes an already-parsed JSON scalar
  // (`0`, `false`) for `application/json` requests: read it back as the text it was.
  const body: unknown = event.body;
  if (body === undefined || body === null || body === '') return undefined;
  const given = typeof body === 'string' ? body : JSON.stringify(body);
  const size = event.isBase64Encoded ? Math.floor((given.length * 3) / 4) : Buffer.byteLength(given, 'utf8');
  if (size > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const text = event.isBase64Encoded ? Buffer.from(given, 'base64').toString('utf8') : given;
  if (text.trim() === '') return undefined;
  const scratch = { event: { headers: {}, body: text, isBase64Encoded: false } } as unknown as Request;
  try {
    void jsonParser.before?.(scratch);
  } catch (error) {
    if (error instanceof Error && error.message === 'Forbidden key in JSON body') {
      const field = forbiddenKeyPath(JSON.parse(text) as unknown) ?? 'body';
      const key = field.split('.').at(-1) ?? field;
      throw new ValidationError(`Invalid body: ${field}.`, [
        { field, code: 'VALIDATION_ERROR', message: `The key ${key} is not allowed.` },
      ]);
    }
    throw new InvalidBodyError();
  }
  return (scratch.event as { body: unknown }).body;
};

/** The dotted path of the first `__proto__` (or `constructor` holding a `prototype`) key, as the parser refuses them. */
const forbiddenKeyPath = (value: unknown, path: readonly string[] = []): string | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    const forbidden =
      key === '__proto__' ||
      (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype'));
    if (forbidden) return [...path, key].join('.');
    const found = forbiddenKeyPath(child, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
};

/** Reads the JSON body (when the route takes one) before validation; the raw event body is left as it came. */
export const jsonBody = (): Middleware => ({
  before: function parseJsonBody(request) {
    const state = states.get(request.event);
    if (state !== undefined) state.body = readBody(request.event);
  },
});

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
    const state = states.get(request.event);
    const { event } = request;
    const input = {
      body: schemas.body === undefined ? undefined : validBody(schemas.body, state?.body),
      query: schemas.query === undefined ? undefined : parseQuery(schemas.query, event),
      params: schemas.params === undefined ? undefined : parseWith(schemas.params, event.pathParameters ?? {}, 'path'),
    };
    if (state !== undefined) state.input = input;
  },
});

/** Cookies of a payload 2.0 event (API Gateway puts them in `cookies`, not the header). */
export const readCookies = (event: Event): Record<string, string> => {
  const pairs = event.cookies ?? (event.headers?.['cookie'] ?? '').split(';');
  const cookies: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at > 0) cookies[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return cookies;
};
