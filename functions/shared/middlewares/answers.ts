// What an endpoint answers and the finished answers of the chain's gates: the HttpResult an endpoint returns and
// its rendering as API Gateway's structured result, the headers of every answer, and the 503, 500 and thrown
// answers gates refuse with.
import { envelope } from '../errors.js';
import type { Result } from './request-state.js';

export const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export const JSON_TYPE = 'application/json; charset=utf-8';

/** What an endpoint returns: `body` undefined is an empty body, a string is sent as is, anything else as JSON. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Set-Cookie values (payload 2.0 `cookies`). */
  readonly cookies?: readonly string[];
}

/** A finished answer thrown by a gate (the general limiter's plain-text 429): rendered as is. */
export class ShellAnswer extends Error {
  constructor(readonly response: Result) {
    super(`answered ${response.statusCode}`);
    this.name = 'ShellAnswer';
  }
}

const rendered = new WeakSet<object>();

/** Whether `response` is a rendered result already (an idempotent replay, a gate's answer). */
export const wasRendered = (response: unknown): boolean =>
  typeof response === 'object' && response !== null && rendered.has(response);

export const renderResult = (result: HttpResult): Result => {
  const answer = renderBody(result);
  const complete = result.cookies === undefined ? answer : { ...answer, cookies: [...result.cookies] };
  rendered.add(complete);
  return complete;
};

const renderBody = (result: HttpResult): Result => {
  if (result.body === undefined)
    return { statusCode: result.statusCode, headers: { ...BASE_HEADERS, ...result.headers }, body: '' };
  if (typeof result.body === 'string') {
    return {
      statusCode: result.statusCode,
      headers: { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...result.headers },
      body: result.body,
    };
  }
  return {
    statusCode: result.statusCode,
    headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, ...result.headers },
    body: JSON.stringify(result.body),
  };
};

/** A 503 in the spec's envelope, with Retry-After. */
export const serviceUnavailable = (message: string, retryAfterSeconds: number): Result => ({
  statusCode: 503,
  headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, 'retry-after': String(retryAfterSeconds) },
  body: JSON.stringify(envelope('SERVICE_UNAVAILABLE', message)),
});

/**
 * The spec's CONFIGURATION_ERROR (500) naming the settings that are missing or invalid: no Retry-After, since a
 * retry does not help until an operator sets them (docs/errors.md).
 */
export const configurationError = (problems: readonly string[]): Result => ({
  statusCode: 500,
  headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE },
  body: JSON.stringify(envelope('CONFIGURATION_ERROR', `The service is not configured: ${problems.join('; ')}.`)),
});
