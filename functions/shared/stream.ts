// Response-streaming endpoints (middy's streamify execution mode): `stream(spec, fn)` describes one; the streaming
// function's router binds them to the shell (shell.ts bindStream): the same request id, access log, CORS,
// security headers, error envelope, gates and validation as every endpoint. The endpoint returns a status,
// headers and a Readable body piped to the client as it is produced.
import { Readable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type * as v from 'valibot';
import { RouteNotFoundError } from '../../domain/errors.js';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import type { HttpMethod, HttpRequest, RouteSpec } from './http.js';
import { matchRoute } from './router.js';
import {
  bindStream,
  type BaseShell,
  type LambdaStreamHandler,
  type StreamEndpoint,
  type StreamResult,
} from './shell.js';

export type { LambdaStreamHandler, StreamEndpoint, StreamResult };

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export interface StreamRoute {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: StreamEndpoint;
}

export const stream = <Q extends Schema | undefined = undefined, P extends Schema | undefined = undefined>(
  spec: RouteSpec<undefined, Q, P>,
  fn: (request: HttpRequest<undefined, Out<Q>, Out<P>, undefined>) => Promise<StreamResult>,
): StreamEndpoint => ({ spec: spec as RouteSpec, run: fn as StreamEndpoint['run'] });

/** Event streams take their caller from `?sse_token=` only: a request that sends the Authorization header instead is refused. */
export const sseTokenOnly = (token: string | undefined, headers: HttpRequest<unknown, unknown, unknown>['headers']) => {
  if (token === undefined && headers['authorization'] !== undefined) {
    throw new InvalidTokenError(
      'Event streams do not accept the Authorization header: pass ?sse_token= from POST /api/v1/auth/sse-token.',
    );
  }
};

/** A CORS preflight (OPTIONS) of a stream path: 204 and no body (the CORS headers come from the shell). */
const streamPreflight = stream(
  { operationId: 'stream_preflight', summary: 'CORS preflight', tags: [], permission: 'public', responses: {} },
  async () => ({ statusCode: 204, headers: { 'cache-control': 'no-store' }, body: Readable.from([]) }),
);

const streamNotFound = stream(
  { operationId: 'stream_not_found', summary: 'No stream at this path', tags: [], permission: 'public', responses: {} },
  async ({ method, path }) => {
    throw new RouteNotFoundError(method, path);
  },
);

/** The Lambda handler of the streaming function: dispatches to the matching stream endpoint. */
export const streamRouter = (routes: readonly StreamRoute[], shell: BaseShell): LambdaStreamHandler => {
  const bound = routes.map((r) => ({ method: r.method, path: r.path, handler: bindStream(r.handler, shell) }));
  const unknown = bindStream(streamNotFound, shell);
  const preflight = bindStream(streamPreflight, shell);
  return awslambda.streamifyResponse(async function routeStream(
    event: APIGatewayProxyEventV2,
    responseStream: awslambda.HttpResponseStream,
    context: Context,
  ) {
    const method = event.requestContext.http.method.toUpperCase();
    if (method === 'OPTIONS') return preflight(event, responseStream, context);
    const found = matchRoute(bound, method, event.rawPath);
    if (found === undefined) return unknown(event, responseStream, context);
    return found.route.handler(
      { ...event, routeKey: `${found.route.method} ${found.route.path}`, pathParameters: found.params },
      responseStream,
      context,
    );
  });
};
