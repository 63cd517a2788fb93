// How an endpoint is described: `http(spec, fn)` in each endpoint file. The spec (operation id, permission,
// schemas, documented responses) is the single place the route is described: the router, the OpenAPI document
// and the route tests all read it. The endpoint is run by the shell (functions/shared/shell.ts), which its
// area's router binds to the dependencies it needs (authenticators, rate gate, startup check, CORS).
import type * as v from 'valibot';
import type { Permission } from '../../domain/identity/permissions.js';
import type { Caller } from '../../domain/identity/types.js';
import type { KeyedRequest } from '../../domain/shared/idempotency.js';
import type { AgentCaller } from '../../domain/targets/types.js';
import type { HttpResult } from './middlewares.js';

export {
  BASE_HEADERS,
  LIMITER_DOWN_RETRY_SECONDS,
  MAX_BODY_BYTES,
  parseQuery,
  readBody,
  readCookies,
  renderResult,
  serviceUnavailable,
  validBody,
  type AgentAuthenticator,
  type Authenticator,
  type HttpResult,
  type RateGate,
} from './middlewares.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

export interface ResponseDoc {
  readonly description: string;
  readonly schema?: Schema;
  /** Defaults to application/json when a schema is given. */
  readonly contentType?: string;
}

export interface RouteSpec<
  B extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  P extends Schema | undefined = Schema | undefined,
> {
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
  /**
   * `refuse`: when the general limiter's store cannot answer, answer 503 SERVICE_UNAVAILABLE (Retry-After) instead
   * of letting the request through (the auth routes: guessing passwords must not get faster when the store fails).
   */
  readonly limiterDown?: 'refuse';
  /**
   * Honours an `Idempotency-Key` header (functions/shared/idempotency.ts): a retry with the same key and request
   * answers the first 2xx again without running the endpoint twice.
   */
  readonly idempotent?: true;
  /**
   * The endpoint stores a claim on its Idempotency-Key with its work (domain/deployments/create.ts): a retry while
   * the key's first request still holds it is run with `keyed.inFlight`, to answer what that request made.
   */
  readonly keyClaims?: true;
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
  /**
   * The body as text, for routes that take no JSON body (spec.body undefined): the OAuth endpoints read
   * application/x-www-form-urlencoded. Undefined when there is none or it is above MAX_BODY_BYTES.
   */
  readonly rawBody?: string | undefined;
  /** The query string as sent, for routes that take no query schema (the OAuth authorization page). */
  readonly rawQuery?: string;
  /** An `idempotent` route's request sent with an Idempotency-Key by a caller: the key and its hashes. */
  readonly keyed?: KeyedRequest;
}

/** Which credential an endpoint needs: none, a user's (token or API key), or an agent's. */
export type AuthKind = 'public' | 'user' | 'agent';

type KindOf<S> = S extends { permission: 'public' } ? 'public' : S extends { permission: 'agent' } ? 'agent' : 'user';
type CallerOf<K extends AuthKind> = K extends 'public' ? undefined : K extends 'agent' ? AgentCaller : Caller;

/** An endpoint: its spec and its function, not yet bound to a shell (see shell.ts bindHttp and router.ts). */
export interface HttpEndpoint<K extends AuthKind = AuthKind> {
  readonly spec: RouteSpec;
  readonly kind: K;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the shell hands each endpoint its own typed request
  readonly run: (request: HttpRequest<any, any, any, any>) => Promise<HttpResult>;
}

export const http = <
  B extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  P extends Schema | undefined = undefined,
  S extends RouteSpec<B, Q, P> = RouteSpec<B, Q, P>,
>(
  spec: S & RouteSpec<B, Q, P>,
  fn: (request: HttpRequest<Out<B>, Out<Q>, Out<P>, CallerOf<KindOf<S>>>) => Promise<HttpResult>,
): HttpEndpoint<KindOf<S>> => {
  const kind = (spec.permission === 'public' ? 'public' : spec.permission === 'agent' ? 'agent' : 'user') as KindOf<S>;
  return { spec: spec as RouteSpec, kind, run: fn };
};
