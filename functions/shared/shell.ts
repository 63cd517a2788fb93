// The shell: the middy chain that runs an endpoint, made of the named middlewares of middlewares/ and the
// dependencies the area's composition root passes in. `ShellFor<K>` is what a set of endpoints needs: every
// shell has the rate gate, the startup check and the CORS settings; endpoints that take a user credential need
// `authenticate`, agent endpoints `authenticateAgent`. A router given routes whose shell lacks one of them
// does not compile.
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { clientIp } from './client-ip.js';
import type { CorsSettings } from './cors.js';
import type { AuthKind, HttpEndpoint, HttpRequest, RouteSpec } from './http.js';
import { withRequestBudget } from '../../infra/request-budget.js';
import { idempotentRun, type IdempotencyStore } from './idempotency.js';
import { type HttpResult } from './middlewares/answers.js';
import {
  authentication,
  type Access,
  type AgentAuthenticator,
  type Authenticator,
} from './middlewares/authentication.js';
import { readCookies } from './middlewares/cookies.js';
import { cors } from './middlewares/cors.js';
import { errorEnvelope } from './middlewares/error-envelope.js';
import { jsonBody, MAX_BODY_BYTES } from './middlewares/json-body.js';
import { rateLimit, type RateGate } from './middlewares/rate-limit.js';
import { renderResponse } from './middlewares/render-response.js';
import { requestLog } from './middlewares/request-log.js';
import { requestState, type Middleware } from './middlewares/request-state.js';
import { securityHeaders } from './middlewares/security-headers.js';
import { startupGate } from './middlewares/startup-gate.js';
import { validateRequest } from './middlewares/validate-request.js';

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

/** What every endpoint's shell has. */
export interface BaseShell {
  readonly rateGate: RateGate;
  /** What the cold start found missing (empty when the service may serve). */
  readonly startupProblems: () => readonly string[];
  readonly cors: CorsSettings;
  /** Where `idempotent` routes keep their Idempotency-Key records; without it the header is not honoured (tests). */
  readonly idempotency?: IdempotencyStore;
}
export interface UserAuthentication {
  readonly authenticate: Authenticator;
}
export interface AgentAuthentication {
  readonly authenticateAgent: AgentAuthenticator;
}

type NeedsOf<K extends AuthKind> = K extends 'user'
  ? UserAuthentication
  : K extends 'agent'
    ? AgentAuthentication
    : BaseShell;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** The shell endpoints of kinds K need. */
export type ShellFor<K extends AuthKind> = BaseShell & Intersection<NeedsOf<K>>;
/** Every dependency a shell can have (tests bind any endpoint with it). */
export type FullShell = BaseShell & UserAuthentication & AgentAuthentication;

export type LambdaHttpHandler = (event: Event, context: Context) => Promise<Result>;

const accessOf = (spec: RouteSpec, shell: Partial<UserAuthentication & AgentAuthentication>): Access | undefined => {
  if (spec.permission === 'public') return undefined;
  if (spec.permission === 'agent') {
    if (shell.authenticateAgent === undefined)
      throw new Error(`${spec.operationId}: bound without an agent authenticator`);
    return { kind: 'agent', authenticateAgent: shell.authenticateAgent };
  }
  if (shell.authenticate === undefined) throw new Error(`${spec.operationId}: bound without an authenticator`);
  return {
    kind: 'user',
    authenticate: shell.authenticate,
    permission: spec.permission,
    userOnly: spec.credentials === 'user',
  };
};

/** The outer middlewares every answer passes: request id and log, CORS, security headers, the error envelope. */
const outer = (shell: BaseShell): Middleware[] => [requestLog(), cors(shell.cors), securityHeaders(), errorEnvelope()];

/** The gates and input of an endpoint: startup check, rate limit, authentication (when it needs one), body, validation. */
const inner = (spec: RouteSpec, shell: BaseShell, access: Access | undefined): Middleware[] => {
  return [
    httpHeaderNormalizer() as Middleware,
    startupGate(shell.startupProblems),
    rateLimit(shell.rateGate, spec.limiterDown === undefined ? {} : { limiterDown: spec.limiterDown }),
    ...(access === undefined ? [] : [authentication(access)]),
    ...(spec.body === undefined ? [] : [jsonBody()]),
    validateRequest(spec),
  ];
};

/** The request an endpoint function receives, from what the middlewares found. */
const requestOf = (
  event: Event,
  context: Context,
  spec?: RouteSpec,
): HttpRequest<unknown, unknown, unknown, unknown> => {
  const state = requestState(context);
  return {
    caller: state?.caller,
    cookies: readCookies(event),
    method: event.requestContext?.http?.method ?? '',
    path: event.rawPath,
    body: state?.input?.body,
    query: state?.input?.query,
    params: state?.input?.params,
    requestId: state?.requestId ?? context.awsRequestId,
    sourceIp: clientIp(event),
    headers: event.headers ?? {},
    // Only routes without a JSON body read the text (the OAuth forms): the others' bodies are not decoded twice.
    ...(spec !== undefined && spec.body === undefined ? { rawBody: rawBodyOf(event) } : {}),
    ...(spec !== undefined && spec.query === undefined ? { rawQuery: event.rawQueryString ?? '' } : {}),
  };
};

/** The body as text (base64 decoded), or undefined when absent or too big to take. */
const rawBodyOf = (event: Event): string | undefined => {
  const body: unknown = event.body;
  if (body === undefined || body === null) return undefined;
  const given = typeof body === 'string' ? body : JSON.stringify(body);
  if (given.length > MAX_BODY_BYTES * 2) return undefined;
  const text = event.isBase64Encoded ? Buffer.from(given, 'base64').toString('utf8') : given;
  return Buffer.byteLength(text) > MAX_BODY_BYTES ? undefined : text;
};

/** An endpoint bound to its shell: the Lambda handler of one route. */
export const bindHttp = <K extends AuthKind>(endpoint: HttpEndpoint<K>, shell: ShellFor<K>): LambdaHttpHandler => {
  const chain = middy<Event, Result>();
  const middlewares = [
    ...outer(shell),
    renderResponse(),
    ...inner(endpoint.spec, shell, accessOf(endpoint.spec, shell as Partial<FullShell>)),
  ];
  for (const middleware of middlewares) chain.use(middleware);
  const store = endpoint.spec.idempotent === true ? shell.idempotency : undefined;
  const run =
    store === undefined
      ? (request: HttpRequest<unknown, unknown, unknown, unknown>) => endpoint.run(request)
      : idempotentRun(endpoint.run, store, { keyClaims: endpoint.spec.keyClaims === true });
  const handler = chain.handler(async function endpointHandler(event, context) {
    // renderResponse turns the HttpResult into API Gateway's structured result on the way out.
    return (await run(requestOf(event, context, endpoint.spec), context)) as unknown as Result;
  });
  // The creates (idempotent routes) run under a deadline well inside the gateway's 29 s (infra/request-budget.ts).
  if (endpoint.spec.idempotent !== true) return handler;
  return ((event: Event, context: Context) => withRequestBudget(() => handler(event, context))) as LambdaHttpHandler;
};

/** The answer to a CORS preflight (OPTIONS): 204, with the CORS headers when the origin is allowed. */
export const bindPreflight = (shell: BaseShell): LambdaHttpHandler => {
  const chain = middy<Event, Result>();
  for (const middleware of outer(shell)) chain.use(middleware);
  return chain.handler(async () => ({ statusCode: 204, headers: { 'cache-control': 'no-store' }, body: '' }));
};

// ---- streaming endpoints --------------------------------------------------------------------------------------

/** What a streaming endpoint returns: a status, headers and a Readable body piped to the client as produced. */
export interface StreamResult {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: import('node:stream').Readable;
}

export type LambdaStreamHandler = (
  event: Event,
  responseStream: awslambda.HttpResponseStream,
  context: Context,
) => void | Promise<void>;

/** A response-streaming endpoint (public at the shell: it checks its own `?sse_token=`; `spec.permission` documents what that token's user needs). */
export interface StreamEndpoint {
  readonly spec: RouteSpec;
  readonly run: (request: HttpRequest<undefined, never, never, undefined>) => Promise<StreamResult>;
}

/**
 * A streaming endpoint bound to its shell (middy's streamify execution mode): the same outer middlewares and gates
 * as every endpoint; errors raised before the body starts are JSON envelopes.
 */
export const bindStream = (endpoint: StreamEndpoint, shell: BaseShell): LambdaStreamHandler => {
  // Built on first call: middy's streamify mode needs the runtime's `awslambda` global, which exists in a
  // Lambda (and in local/stream-runner.ts) but not where routes are only read (OpenAPI, tests).
  const build = (): LambdaStreamHandler => {
    const chain = middy<Event, Result>({ executionMode: executionModeStreamifyResponse });
    // A stream checks its own credential (the single-use `?sse_token=`): the shell authenticates nobody.
    for (const middleware of [...outer(shell), ...inner(endpoint.spec, shell, undefined)]) chain.use(middleware);
    return chain.handler(async function streamEndpoint(event, context) {
      const result = await endpoint.run(requestOf(event, context) as HttpRequest<undefined, never, never, undefined>);
      // middy pipes a Readable body into the response stream; the structured-result type does not say so.
      return { ...result, headers: { ...result.headers } } as unknown as Result;
    }) as unknown as LambdaStreamHandler;
  };
  let built: LambdaStreamHandler | undefined;
  return (event, responseStream, context) => (built ??= build())(event, responseStream, context);
};

export type { HttpResult };
