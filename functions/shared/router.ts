// Path templates (`/api/v1/actions/{id}/versions/{version}`) matched against a request, and the area router:
// the Lambda entry of one API area, which sends each request to the endpoint handler its route names.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { HttpEndpoint, HttpMethod, LambdaHttpHandler } from './http.js';
import { notFound } from './not-found.js';

export interface Route {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: HttpEndpoint;
}

export const route = (method: HttpMethod, path: string, handler: HttpEndpoint): Route => ({ method, path, handler });

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
    if (matches && (best === undefined || literals > best.literals)) best = { match: { route: candidate, params }, literals };
  }
  return best?.match;
};

/** The Lambda handler of an area: dispatches to the matching endpoint, or answers the NOT_FOUND envelope. */
export const areaRouter = (routes: readonly Route[]): LambdaHttpHandler =>
  async function routeRequest(event: APIGatewayProxyEventV2, context: Context) {
    const method = event.requestContext.http.method.toUpperCase();
    const found = matchRoute(routes, method, event.rawPath);
    if (found === undefined) return notFound(event, context);
    return found.route.handler(
      { ...event, routeKey: `${found.route.method} ${found.route.path}`, pathParameters: found.params },
      context,
    );
  };
