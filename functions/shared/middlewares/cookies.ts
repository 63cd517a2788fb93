// The cookies of a request, as the shell hands them to an endpoint (not a middleware: read when the endpoint runs).
import type { Event } from './request-state.js';

/** Cookies of a payload 2.0 event (API Gateway puts them in `cookies`, not the header). */
export const readCookies = (event: Event): Record<string, string> => {
  const pairs = event.cookies ?? (event.headers?.['cookie'] ?? '').split(';');
  const cookies: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at > 0) cookies[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return cookies;
};
