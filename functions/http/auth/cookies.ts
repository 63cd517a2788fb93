// The refresh-token cookie: HttpOnly, SameSite=Strict, scoped to the auth paths, Secure except on plain-HTTP
// localhost (where browsers and curl would otherwise drop it).
import type { HttpRequest } from '../../shared/http.js';

export const REFRESH_COOKIE = 'deployer_refresh';
const PATH = '/api/v1/auth';

export const isPlainLocalhost = (headers: HttpRequest<unknown, unknown, unknown, unknown>['headers']): boolean => {
  const host = (headers['x-forwarded-host'] || headers['host'] || '').replace(/:\d+$/, '');
  return headers['x-forwarded-proto'] === 'http' && ['localhost', '127.0.0.1', '[::1]'].includes(host);
};

const attributes = (request: HttpRequest<unknown, unknown, unknown, unknown>): string =>
  `Path=${PATH}; HttpOnly; SameSite=Strict${isPlainLocalhost(request.headers) ? '' : '; Secure'}`;

export const refreshCookie = (
  request: HttpRequest<unknown, unknown, unknown, unknown>,
  token: string,
  expiresAt: Date,
): string =>
  `${REFRESH_COOKIE}=${token}; ${attributes(request)}; Max-Age=${Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000))}`;

export const clearedRefreshCookie = (request: HttpRequest<unknown, unknown, unknown, unknown>): string =>
  `${REFRESH_COOKIE}=; ${attributes(request)}; Max-Age=0`;

// The single sign-on binding cookie: ties a sign-in started in this browser to the callback that completes it.
// SameSite=Lax, because the provider sends the browser back with a cross-site top-level navigation (a Strict cookie
// would not come with it); HttpOnly; scoped to the SSO paths; short-lived (the sign-in's state lifetime).
export const SSO_COOKIE = 'deployer_sso';
const SSO_PATH = '/api/v1/auth/sso';

const ssoAttributes = (request: HttpRequest<unknown, unknown, unknown, unknown>): string =>
  `Path=${SSO_PATH}; HttpOnly; SameSite=Lax${isPlainLocalhost(request.headers) ? '' : '; Secure'}`;

export const ssoCookie = (
  request: HttpRequest<unknown, unknown, unknown, unknown>,
  binding: string,
  expiresAt: Date,
): string =>
  `${SSO_COOKIE}=${binding}; ${ssoAttributes(request)}; Max-Age=${Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000))}`;

export const clearedSsoCookie = (request: HttpRequest<unknown, unknown, unknown, unknown>): string =>
  `${SSO_COOKIE}=; ${ssoAttributes(request)}; Max-Age=0`;
