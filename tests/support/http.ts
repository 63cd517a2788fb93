// A small HTTP client for the end-to-end tests: the spec's JSON API over the stack's single origin. Every answer
// is checked against the OpenAPI document (openapi-conformance.ts): one the document does not describe throws,
// so the test making the call fails. Requests outside the document (unknown paths, on purpose) must still answer
// the error envelope. `conform: false` skips the check for a call reading a record corrupted on purpose.
import { assertConforms } from './openapi-conformance.js';

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The body as received. */
  readonly text: string;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** The raw Authorization header (for malformed ones). */
  readonly header?: string;
  /** JSON-encoded unless already a string. */
  readonly body?: unknown;
  readonly cookie?: string;
  /** Further request headers (an agent's x-deployer-agent-version, ...). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * false: skip the OpenAPI check, for a call that reads a record a test corrupted behind the service's back (its
   * answer echoes a state the service itself never produces). Everything else is checked.
   */
  readonly conform?: boolean;
}

export const apiClient = (baseUrl: () => string) => {
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (options.header !== undefined) headers['authorization'] = options.header;
    if (options.cookie !== undefined) headers['cookie'] = options.cookie;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers,
      body:
        options.body === undefined
          ? undefined
          : typeof options.body === 'string'
            ? options.body
            : JSON.stringify(options.body),
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type');
    if (options.conform !== false) assertConforms({ method, path, status: response.status, contentType, text });
    const json = text === '' || !/json/i.test(contentType ?? '') ? undefined : JSON.parse(text);
    return { status: response.status, headers: response.headers, json, text };
  };

  /** Logs in; the access token, the refresh cookie (`name=value`) and the whole answer. */
  const login = async (credentials: { email: string; password: string }) => {
    const reply = await call('POST', '/api/v1/auth/login', { body: credentials });
    if (reply.status !== 200)
      throw new Error(`login of ${credentials.email} answered ${reply.status}: ${JSON.stringify(reply.json)}`);
    const setCookie = reply.headers.getSetCookie()[0] ?? '';
    return {
      token: reply.json.access_token as string,
      cookie: setCookie.split(';')[0] ?? '',
      setCookie,
      body: reply.json,
    };
  };

  return { call, login };
};
