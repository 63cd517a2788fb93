// The shell of response-streaming endpoints (middy's streamify execution mode): the same request id, access
// log, error envelope and validation as http(); the endpoint returns a status, headers and a Readable body
// that is piped to the client as it is produced. Errors raised before the body starts are JSON envelopes.
import type { Readable } from 'node:stream';
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as v from 'valibot';
import { RouteNotFoundError } from '../../domain/errors.js';
import { errorEnvelope, parseQuery, readCookies, requestLog, type HttpMethod, type HttpRequest, type RouteSpec } from './http.js';
import { matchRoute } from './router.js';
import { parseWith } from './validation.js';
import { clientIp } from './client-ip.js';

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export interface StreamResult {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readable;
}

export type LambdaStreamHandler = (
  event: APIGatewayProxyEventV2,
  responseStream: awslambda.HttpResponseStream,
  context: Context,
) => void | Promise<void>;

export interface StreamEndpoint extends LambdaStreamHandler {
  readonly spec: RouteSpec;
}

export interface StreamRoute {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: StreamEndpoint;
}

export const stream = <Q extends Schema | undefined = undefined, P extends Schema | undefined = undefined>(
  spec: RouteSpec<undefined, Q, P>,
  fn: (request: HttpRequest<undefined, Out<Q>, Out<P>, undefined>) => Promise<StreamResult>,
): StreamEndpoint => {
  // Built on first call: middy's streamify mode needs the runtime's `awslambda` global, which exists in a
  // Lambda (and in local/stream-runner.ts) but not where routes are only read (OpenAPI, tests).
  const build = () => middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>({
    executionMode: executionModeStreamifyResponse,
  })
    .use(requestLog())
    .use(errorEnvelope())
    .use(httpHeaderNormalizer())
    .handler(async function streamEndpoint(event, context) {
      const result = await fn({
        caller: undefined,
        cookies: readCookies(event),
        method: event.requestContext?.http?.method ?? '',
        path: event.rawPath,
        body: undefined,
        query: (spec.query === undefined ? undefined : parseQuery(spec.query, event)) as Out<Q>,
        params: (spec.params === undefined ? undefined : parseWith(spec.params, event.pathParameters ?? {}, 'path')) as Out<P>,
        requestId: context.awsRequestId,
        sourceIp: clientIp(event),
        headers: event.headers ?? {},
      });
      // middy pipes a Readable body into the response stream; the structured-result type does not say so.
      return result as unknown as APIGatewayProxyStructuredResultV2;
    }) as unknown as LambdaStreamHandler;
  let built: LambdaStreamHandler | undefined;
  const handler: LambdaStreamHandler = (event, responseStream, context) => (built ??= build())(event, responseStream, context);
  return Object.assign(handler, { spec: spec as RouteSpec });
};

const streamNotFound = stream(
  { operationId: 'stream_not_found', summary: 'No stream at this path', tags: [], permission: 'public', responses: {} },
  async ({ method, path }) => {
    throw new RouteNotFoundError(method, path);
  },
);

/** The Lambda handler of the streaming function: dispatches to the matching stream endpoint. */
export const streamRouter = (routes: readonly StreamRoute[]): LambdaStreamHandler =>
  awslambda.streamifyResponse(async function routeStream(event: APIGatewayProxyEventV2, responseStream: awslambda.HttpResponseStream, context: Context) {
    const method = event.requestContext.http.method.toUpperCase();
    const found = matchRoute(routes, method, event.rawPath);
    if (found === undefined) return streamNotFound(event, responseStream, context);
    return found.route.handler(
      { ...event, routeKey: `${found.route.method} ${found.route.path}`, pathParameters: found.params },
      responseStream,
      context,
    );
  });
