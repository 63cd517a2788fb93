// The JSON body of a request (@middy/http-json-body-parser), read before validation: 413 above MAX_BODY_BYTES,
// 400 when it is not JSON or holds a forbidden key.
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { InvalidBodyError, PayloadTooLargeError, ValidationError } from '../../../domain/errors.js';
import { requestState, type Event, type Middleware, type Request } from './request-state.js';

/**
 * The largest request body taken (bytes, after base64 decoding): 8 MiB, above the agent's largest output batch
 * (100 chunks of up to 64 KiB, JSON-escaped) and far above any other body. API Gateway's own limit is 10 MB.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

// Any content type is read as JSON (`curl -d` sends application/x-www-form-urlencoded); `__proto__` and
// `constructor.prototype` keys are refused by the parser.
const jsonParser = httpJsonBodyParser({ disableContentTypeCheck: true }) as Middleware;

/**
 * The JSON body of a request: undefined when absent or blank, the parsed value otherwise (413 above
 * MAX_BODY_BYTES, 400 INVALID_BODY when it is not JSON). Parsed by @middy/http-json-body-parser.
 */
export const readBody = (event: Event): unknown => {
  // API Gateway always passes the body as text; serverless-offline passes an already-parsed JSON scalar
  // (`0`, `false`) for `application/json` requests: read it back as the text it was.
  const body: unknown = event.body;
  if (body === undefined || body === null || body === '') return undefined;
  const given = typeof body === 'string' ? body : JSON.stringify(body);
  const size = event.isBase64Encoded ? Math.floor((given.length * 3) / 4) : Buffer.byteLength(given, 'utf8');
  if (size > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const text = event.isBase64Encoded ? Buffer.from(given, 'base64').toString('utf8') : given;
  if (text.trim() === '') return undefined;
  const scratch = { event: { headers: {}, body: text, isBase64Encoded: false } } as unknown as Request;
  try {
    void jsonParser.before?.(scratch);
  } catch (error) {
    if (error instanceof Error && error.message === 'Forbidden key in JSON body') {
      const field = forbiddenKeyPath(JSON.parse(text) as unknown) ?? 'body';
      const key = field.split('.').at(-1) ?? field;
      throw new ValidationError(`Invalid body: ${field}.`, [
        { field, code: 'VALIDATION_ERROR', message: `The key ${key} is not allowed.` },
      ]);
    }
    throw new InvalidBodyError();
  }
  return (scratch.event as { body: unknown }).body;
};

/** The dotted path of the first `__proto__` (or `constructor` holding a `prototype`) key, as the parser refuses them. */
const forbiddenKeyPath = (value: unknown, path: readonly string[] = []): string | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    const forbidden =
      key === '__proto__' ||
      (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype'));
    if (forbidden) return [...path, key].join('.');
    const found = forbiddenKeyPath(child, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
};

/** Reads the JSON body (when the route takes one) before validation; the raw event body is left as it came. */
export const jsonBody = (): Middleware => ({
  before: function parseJsonBody(request) {
    const state = requestState(request.context);
    if (state !== undefined) state.body = readBody(request.event);
  },
});
