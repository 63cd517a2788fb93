// The public API over fetch: JSON in and out, the bearer credential, the error envelope turned into exit codes.
// Reads (GET, and the stream token) are retried on network errors, 429 and 5xx with a short backoff; writes never
// are (a create retried after a lost answer could deploy twice).
import { CLI_VERSION } from './version.js';
import { RefusedError, UnreachableError } from './errors.js';

/** Gives the bearer token; `renew` after a 401 (a login or OAuth token that expired) when the source can. */
export interface TokenSource {
  token(): Promise<string>;
  /** A fresh token, or undefined when this source cannot make one (an API key). */
  renew?(): Promise<string | undefined>;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Retry on network errors, 429 and 5xx. Default: true for GET and for a request with an `idempotency-key` header
   * (retried with the same key), false otherwise.
   */
  readonly retry?: boolean;
  readonly signal?: AbortSignal;
}

export interface Api {
  readonly baseUrl: string;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<{ status: number; body: T }>;
  get<T = unknown>(path: string, options?: RequestOptions): Promise<T>;
  post<T = unknown>(path: string, body?: unknown, options?: RequestOptions): Promise<T>;
  /** Opens a stream (no Authorization header: event streams take `?sse_token=`). */
  stream(path: string, signal?: AbortSignal): Promise<Response>;
}

export const USER_AGENT = `deployer-cli/${CLI_VERSION}`;
const BACKOFF_MS = [500, 1000, 2000, 4000];
/** A keyed create is retried at most this often (a read: once per BACKOFF_MS step). */
const CREATE_RETRIES = 3;
/**
 * A keyed create answered 409 "still in progress" (an earlier attempt of the same key is running, or its answer was
 * cut): asked again every 2 s for up to a minute (past the service's 29 s request timeout), until it answers the
 * first attempt's answer or runs it.
 */
const IN_PROGRESS_WAIT_MS = 2_000;
const IN_PROGRESS_WAITS = 30;

/** The 409 the service answers while a request with the same Idempotency-Key is in flight. */
const inProgress = (text: string): boolean => {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; details?: { header?: string } } };
    return body.error?.code === 'CONFLICT' && body.error.details?.header === 'Idempotency-Key';
  } catch {
    return false;
  }
};

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;
export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** The error an answer carries: the envelope's code and message, or the status when it is not one. */
export const refusal = (status: number, text: string): RefusedError => {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const error = parsed.error;
    if (error && typeof error.code === 'string')
      return new RefusedError(
        status,
        error.code,
        typeof error.message === 'string' ? error.message : '',
        error.details,
      );
  } catch {
    // not JSON: the general limiter's plain-text 429, a proxy's page
  }
  return new RefusedError(status, `HTTP_${status}`, text.trim().slice(0, 200) || `the service answered ${status}`);
};

const describeNetworkError = (error: unknown): string => {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
};

export const createApi = (
  baseUrl: string,
  tokens: TokenSource | undefined,
  wait: Sleep = sleep,
  fetchImpl: typeof fetch = fetch,
): Api => {
  const root = baseUrl.replace(/\/+$/, '');
  const url = (path: string) =>
    path.startsWith('/api/') || path.startsWith('/oauth/') ? root + path : `${root}/api/v1${path}`;

  const once = async (method: string, path: string, options: RequestOptions, token: string | undefined) => {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': USER_AGENT,
      ...options.headers,
    };
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetchImpl(url(path), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
    return { status: response.status, text: await response.text() };
  };

  const request = async <T>(method: string, path: string, options: RequestOptions = {}) => {
    // A create carrying an Idempotency-Key is retried too, with the same key (options.headers are sent again as
    // they are): the service answers a retry of a request it already did with its first answer, never a second run.
    const keyed = options.headers?.['idempotency-key'] !== undefined;
    const retry = options.retry ?? (method === 'GET' || keyed);
    // A keyed create: CREATE_RETRIES; a read, or another request that asks to be retried (the SSE token): the backoff's length.
    const retries = keyed && method !== 'GET' ? CREATE_RETRIES : BACKOFF_MS.length;
    let token = tokens === undefined ? undefined : await tokens.token();
    let renewed = false;
    let waits = 0;
    for (let attempt = 0; ; attempt += 1) {
      let answer: { status: number; text: string };
      try {
        answer = await once(method, path, options, token);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (retry && attempt < retries) {
          await wait(BACKOFF_MS[attempt] as number, options.signal);
          continue;
        }
        throw new UnreachableError(`cannot reach ${root}: ${describeNetworkError(error)}`);
      }
      if (answer.status === 401 && !renewed && tokens?.renew) {
        const fresh = await tokens.renew();
        renewed = true;
        if (fresh !== undefined) {
          token = fresh;
          attempt -= 1;
          continue;
        }
      }
      if (keyed && answer.status === 409 && waits < IN_PROGRESS_WAITS && inProgress(answer.text)) {
        waits += 1;
        attempt -= 1;
        await wait(IN_PROGRESS_WAIT_MS, options.signal);
        continue;
      }
      if ((answer.status === 429 || answer.status >= 500) && retry && attempt < retries) {
        await wait(BACKOFF_MS[attempt] as number, options.signal);
        continue;
      }
      if (answer.status >= 400) {
        const error = refusal(answer.status, answer.text);
        if (answer.status === 429 || answer.status >= 500)
          throw new UnreachableError(`${root} answered ${answer.status} ${error.code}: ${error.message}`);
        throw error;
      }
      const body = (answer.text === '' ? undefined : JSON.parse(answer.text)) as T;
      return { status: answer.status, body };
    }
  };

  return {
    baseUrl: root,
    request,
    get: async (path, options) => (await request('GET', path, options)).body as never,
    post: async (path, body, options) => (await request('POST', path, { ...options, body: body ?? {} })).body as never,
    stream: async (path, signal) => {
      let response: Response;
      try {
        response = await fetchImpl(url(path), {
          headers: { accept: 'text/event-stream', 'user-agent': USER_AGENT },
          signal,
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        throw new UnreachableError(`cannot reach ${root}: ${describeNetworkError(error)}`);
      }
      if (response.status !== 200) {
        const text = await response.text();
        const error = refusal(response.status, text);
        if (response.status === 429 || response.status >= 500)
          throw new UnreachableError(`${root} answered ${response.status} ${error.code}: ${error.message}`);
        throw error;
      }
      return response;
    },
  };
};
