// CORS for browser clients (@middy/http-cors), its headers only on the answers to allowed origins.
import httpCors from '@middy/http-cors';
import type { CorsSettings } from '../cors.js';
import type { Middleware, Result } from './request-state.js';

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
