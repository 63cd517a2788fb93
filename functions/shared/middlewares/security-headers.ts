// The security headers of every answer (@middy/http-security-headers), computed once.
import httpSecurityHeaders from '@middy/http-security-headers';
import type { Middleware, Request } from './request-state.js';

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
