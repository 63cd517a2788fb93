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
