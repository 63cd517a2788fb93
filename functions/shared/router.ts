// Path templates (`/api/v1/actions/{id}/versions/{version}`) matched against a request, and the area router:
// the Lambda entry of one API area, which sends each request to the endpoint handler its route names.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { AuthKind, HttpEndpoint, HttpMethod } from './http.js';
import { notFound } from './not-found.js';
import { bindHttp, bindPreflight, type LambdaHttpHandler, type ShellFor } from './shell.js';

export interface Route<K extends AuthKind = AuthKind> {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: HttpEndpoint<K>;
}

export const route = <K extends AuthKind>(method: HttpMethod, path: string, handler: HttpEndpoint<K>): Route<K> => ({
  method,
  path,
  handler,
});

export interface Match<R> {
  readonly route: R;
  readonly params: Record<string, string>;
}

type Segment = { literal: string } | { param: string };

const compile = (template: string): Segment[] =>
  template
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith('{') && s.endsWith('}') ? { param: s.slice(1, -1) } : { literal: s }));

const splitPath = (path: string): string[] | undefined => {
  try {
    return path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined; // malformed percent-encoding matches nothing
  }
};

/**
 * The route whose template matches `path`; literal segments win over parameters (`/deployments/pending`
 * before `/deployments/{id}`). Matches only routes of `method`.
 */
export const matchRoute = <R extends { readonly method: string; readonly path: string }>(
  routes: readonly R[],
  method: string,
  path: string,
): Match<R> | undefined => {
  const parts = splitPath(path);
  if (parts === undefined) return undefined;
  let best: { match: Match<R>; literals: number } | undefined;
  for (const candidate of routes) {
    if (candidate.method !== method) continue;
    const segments = compile(candidate.path);
    if (segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    const matches = segments.every((segment, i) => {
      const part = parts[i] as string;
      if ('param' in segment) {
        params[segment.param] = part;
        return true;
      }
      literals += 1;
      return segment.literal === part;
    });
    if (matches && (best === undefined || literals > best.literals))
      best = { match: { route: candidate, params }, literals };
  }
  return best?.match;
};

/**
 * The Lambda handler of an area: binds every route's endpoint to the shell (what the area's composition root
 * passes in: a route needing a credential the shell cannot check does not compile), then dispatches each request
 * to the matching endpoint; answers a CORS preflight (OPTIONS) with 204, and anything else with NOT_FOUND.
 */
export const areaRouter = <K extends AuthKind>(routes: readonly Route<K>[], shell: ShellFor<K>): LambdaHttpHandler => {
  const bound = routes.map((r) => ({ method: r.method, path: r.path, handler: bindHttp(r.handler, shell) }));
  const preflight = bindPreflight(shell);
  const unknown = bindHttp(notFound, shell);
  return async function routeRequest(event: APIGatewayProxyEventV2, context: Context) {
    const method = event.requestContext.http.method.toUpperCase();
    if (method === 'OPTIONS') return preflight(event, context);
    const found = matchRoute(bound, method, event.rawPath);
    if (found === undefined) return unknown(event, context);
    return found.route.handler(
      { ...event, routeKey: `${found.route.method} ${found.route.path}`, pathParameters: found.params },
      context,
    );
  };
};
