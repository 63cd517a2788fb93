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
import { InvalidBodyError, ValidationError } from '../../domain/errors.js';
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
  /** `public`, or the permission name (`<resource>:<action>`) a caller needs. */
  readonly permission: 'public' | `${string}:${string}`;
  readonly body?: B;
  readonly query?: Q;
  readonly params?: P;
  readonly responses: Readonly<Record<number, ResponseDoc>>;
}

export interface HttpRequest<B, Q, P> {
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
    const { statusCode, body } = renderError(request.error, requestId);
    request.response = {
      statusCode,
      headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE },
      body: JSON.stringify(body),
    };
  },
});

export const readBody = (event: APIGatewayProxyEventV2): unknown => {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidBodyError();
  }
};

export const parseBody = (schema: Schema, event: APIGatewayProxyEventV2): unknown => {
  const raw = readBody(event);
  if (raw === undefined && !v.safeParse(schema, undefined).success) {
    throw new ValidationError('A JSON body is required.', [
      { field: 'body', code: 'MISSING_FIELD', message: 'A JSON body is required.' },
    ]);
  }
  return parseWith(schema, raw, 'body');
};

export const renderResult = (result: HttpResult): APIGatewayProxyStructuredResultV2 => {
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

export const http = <B extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, P extends Schema | undefined = undefined>(
  spec: RouteSpec<B, Q, P>,
  fn: (request: HttpRequest<Out<B>, Out<Q>, Out<P>>) => Promise<HttpResult>,
): HttpEndpoint => {
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(requestLog())
    .use(errorEnvelope())
    .use(httpHeaderNormalizer())
    .handler(async function endpoint(event) {
      const request: HttpRequest<Out<B>, Out<Q>, Out<P>> = {
        method: event.requestContext?.http?.method ?? '',
        path: event.rawPath,
        body: (spec.body === undefined ? undefined : parseBody(spec.body, event)) as Out<B>,
        query: (spec.query === undefined ? undefined : parseWith(spec.query, event.queryStringParameters ?? {}, 'query')) as Out<Q>,
        params: (spec.params === undefined ? undefined : parseWith(spec.params, event.pathParameters ?? {}, 'path')) as Out<P>,
        requestId: timings.get(event)?.requestId ?? randomUUID(),
        sourceIp: clientIp(event),
        headers: event.headers ?? {},
      };
      return renderResult(await fn(request));
    });
  return Object.assign(handler as unknown as LambdaHttpHandler, { spec: spec as RouteSpec });
};
