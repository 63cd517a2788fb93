// What the middlewares learn about a request, kept on the request's Lambda context (middy hands the same context
// to every middleware and to the endpoint, as its own middlewares set values on it), and the types of the chain.
import type middy from '@middy/core';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Caller } from '../../../domain/identity/types.js';
import type { AgentCaller } from '../../../domain/targets/types.js';

export type Event = APIGatewayProxyEventV2;
export type Result = APIGatewayProxyStructuredResultV2;
export type Middleware = MiddlewareObj<Event, Result>;
export type Request = middy.Request<Event, Result>;

/** The request id and the parsed parts of a request, set along the chain. */
export interface RequestState {
  readonly requestId: string;
  readonly started: number;
  caller?: Caller | AgentCaller;
  body?: unknown;
  input?: { body: unknown; query: unknown; params: unknown };
}

/** The context of a request run by the shell: its state, once requestLog started it. */
type ShellContext = Context & { shellRequest?: RequestState };

/** Starts the state of a request (requestLog, the outermost middleware). */
export const startRequestState = (context: Context, state: RequestState): void => {
  (context as ShellContext).shellRequest = state;
};

/** The request id and the parsed parts of a request (undefined before requestLog ran). */
export const requestState = (context: Context | undefined): RequestState | undefined =>
  (context as ShellContext | undefined)?.shellRequest;
