// The agent's HTTP client: one method per protocol call, JSON in and out, and the retry policy. Network errors,
// 5xx and 429 are retried with backoff (honouring Retry-After) until the caller's signal aborts; an outage is logged
// once when it starts and once when the server answers again. 401 on an authenticated call goes to
// `onUnauthorized` (re-enroll or give up); 409 AGENT_VERSION_INCOMPATIBLE (this agent's major version is not the
// server's) goes to `onIncompatible` (stop); 404 and 409 become typed errors for the caller to act on. Every request
// names the agent's version (x-deployer-agent-version).
import { BACKOFF_BASE_MS, backoffDelay, retryAfterMs, sleep } from './backoff.js';
import { AGENT_INSTANCE_HEADER, AGENT_VERSION_HEADER, AGENT_VERSION_INCOMPATIBLE } from '../protocol/headers.js';
import { AGENT_VERSION } from './version.js';
import {
  SIGN_OF_LIFE_REFRESH_MS,
  type AgentReleaseInfo,
  type ChannelResponse,
  type CompleteRequest,
  type OutputChunk,
  type OutputResponse,
  type PollResponse,
  type RegisterRequest,
  type RegisterResponse,
} from '../protocol/messages.js';

/** The server answered with an error status that retrying will not change. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** The caller's signal aborted while the request was pending or waiting to be retried. */
export class AbortedError extends Error {
  constructor() {
    super('The request was abandoned');
    this.name = 'AbortedError';
  }
}

/** The server could not be reached (or answered 5xx/429) and the call was not to be retried. */
export class UnavailableError extends Error {
  constructor(reason: string) {
    super(`The server is unavailable (${reason})`);
    this.name = 'UnavailableError';
  }
}

export interface ClientOptions {
  readonly server: string;
  readonly fetch: typeof fetch;
  /** A progress line (without timestamp and prefix). */
  readonly log: (message: string) => void;
  /**
   * Called on a 401 from an authenticated call made with `usedToken`. Either installs a new token (re-enrollment)
   * and resolves, so the call is repeated, or throws to end the call with that error.
   */
  readonly onUnauthorized?: (usedToken: string) => Promise<void>;
  /**
   * Called when the server refuses an authenticated call because this agent's version is of another major version
   * than the server's (409 AGENT_VERSION_INCOMPATIBLE), with the server's message naming both versions; the call
   * then throws its HttpError as usual.
   */
  readonly onIncompatible?: (message: string) => void;
  readonly requestTimeoutMs?: number;
  /**
   * Called when the server answered a request it records as a sign of life (a poll, a completion), with the time the
   * stored heartbeat is at least as new as (its sending, less SIGN_OF_LIFE_REFRESH_MS).
   */
  readonly onSignOfLife?: (heardAt: number) => void;
  readonly random?: () => number;
}

interface CallOptions {
  readonly body?: unknown;
  readonly auth: boolean;
  readonly signal?: AbortSignal | undefined;
  /** false: one attempt; a network error, 5xx or 429 throws UnavailableError. */
  readonly retry: boolean;
  readonly timeoutMs?: number;
  /** Stop retrying after this long (ms) and throw UnavailableError. */
  readonly giveUpAfterMs?: number;
  /** The server records the request as a sign of life (onSignOfLife is told of a 2xx answer). */
  readonly signOfLife?: true;
}

const describeFailure = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== null && typeof cause === 'object') {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (cause instanceof Error) return cause.message;
  }
  if (error.name === 'TimeoutError') return 'request timed out';
  return error.message;
};

/** The channel's release, when it has the expected shape. */
const releaseOf = (value: unknown): AgentReleaseInfo | null => {
  if (value === null || typeof value !== 'object') return null;
  const { version, sha256, size, url } = value as Record<string, unknown>;
  return typeof version === 'string' &&
    typeof sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(sha256) &&
    typeof size === 'number' &&
    Number.isInteger(size) &&
    size > 0 &&
    typeof url === 'string'
    ? { version, sha256, size, url }
    : null;
};

/** Read through a function: TypeScript would otherwise assume a signal checked once stays as it was. */
const aborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

const errorEnvelope = (text: string): { code: string; message: string } | undefined => {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = parsed.error ?? {};
    if (typeof code === 'string') return { code, message: typeof message === 'string' ? message : '' };
  } catch {
    // not JSON: the status says enough
  }
  return undefined;
};

export class AgentClient {
  private token: string | undefined;
  private outageSince: number | undefined;
  private readonly base: string;

  constructor(private readonly options: ClientOptions) {
    this.base = options.server.replace(/\/+$/, '');
  }

  setToken(token: string): void {
    this.token = token;
  }

  private instance: string | undefined;

  /** This installation's id, sent with every authenticated request (x-deployer-agent-instance). */
  setInstance(instance: string): void {
    this.instance = instance;
  }

  /** Enrollment. 401 (unknown or expired enrollment token) throws HttpError at once. */
  register(body: RegisterRequest, giveUpAfterMs: number): Promise<RegisterResponse> {
    return this.call<RegisterResponse>('POST', '/api/v1/agent/register', {
      body,
      auth: false,
      retry: true,
      giveUpAfterMs,
    });
  }

  /**
   * One attempt: a missed heartbeat is simply sent again at the next tick. `stopping`: the agent's goodbye as it stops
   * cleanly (its target is offline at once).
   */
  heartbeat(
    runningCommandIds: readonly string[],
    signal?: AbortSignal,
    options: { readonly stopping?: boolean } = {},
  ): Promise<{ server_time: string }> {
    return this.call('POST', '/api/v1/agent/heartbeat', {
      body: { running_command_ids: runningCommandIds, ...(options.stopping === true ? { stopping: true } : {}) },
      auth: true,
      retry: false,
      signal,
    });
  }

  /** The push channel's address and cadences; retried until `signal` aborts. Also counts as a heartbeat. */
  async channel(signal: AbortSignal): Promise<ChannelResponse> {
    const answer = await this.call<Partial<ChannelResponse>>('GET', '/api/v1/agent/channel', {
      auth: true,
      retry: true,
      signal,
    });
    const seconds = (value: unknown): number =>
      typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : Number.POSITIVE_INFINITY;
    return {
      socket_url: typeof answer.socket_url === 'string' && answer.socket_url !== '' ? answer.socket_url : null,
      heartbeat_seconds: seconds(answer.heartbeat_seconds),
      idle_ping_seconds: seconds(answer.idle_ping_seconds),
      poll_wait_seconds: seconds(answer.poll_wait_seconds),
      output_in_completion: answer.output_in_completion === true,
      release: releaseOf(answer.release),
      ...(typeof answer.accepted === 'string' ? { accepted: answer.accepted } : {}),
    };
  }

  /**
   * The bytes at `url` (on this client's server only: the agent token goes nowhere else), at most `maxBytes`; one
   * attempt. Used for the agent's own update (agent/update.ts), which checks them against the channel's checksum.
   */
  async download(url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    const target = new URL(url, `${this.base}/`);
    if (target.origin !== new URL(this.base).origin)
      throw new Error(`refusing to download ${target.href}: not on the server ${this.base}`);
    const headers: Record<string, string> = { [AGENT_VERSION_HEADER]: AGENT_VERSION };
    if (this.token !== undefined) headers['authorization'] = `Bearer ${this.token}`;
    const response = await this.options.fetch(target.href, { headers, signal, redirect: 'error' });
    if (!response.ok) {
      await response.body?.cancel();
      throw new HttpError(
        response.status,
        `HTTP_${response.status}`,
        `GET ${target.pathname} answered ${response.status}`,
      );
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > maxBytes)
      throw new Error(`GET ${target.pathname} sent ${bytes.length} bytes, more than ${maxBytes}`);
    return bytes;
  }

  /** The current agent token, for the WebSocket handshake's Authorization header. */
  get currentToken(): string | undefined {
    return this.token;
  }

  async poll(waitSeconds: number, max: number, signal: AbortSignal): Promise<PollResponse> {
    const answer = await this.call<Partial<PollResponse>>(
      'GET',
      `/api/v1/agent/commands?wait=${waitSeconds}&max=${max}`,
      {
        auth: true,
        retry: true,
        signal,
        timeoutMs: (waitSeconds + 30) * 1000,
        signOfLife: true,
      },
    );
    return {
      commands: Array.isArray(answer.commands) ? answer.commands : [],
      cancel: Array.isArray(answer.cancel) ? answer.cancel : [],
    };
  }

  output(commandId: string, chunks: readonly OutputChunk[], signal?: AbortSignal): Promise<OutputResponse> {
    return this.call('POST', `/api/v1/agent/commands/${encodeURIComponent(commandId)}/output`, {
      body: { chunks },
      auth: true,
      retry: true,
      signal,
    });
  }

  /**
   * A completion is no heartbeat: it says so (`sign_of_life: false`), the server writes nothing for it to the target,
   * and the heartbeats keep their cadence (a fan-out's agents each saved a write per command).
   */
  async complete(commandId: string, body: CompleteRequest, signal?: AbortSignal): Promise<void> {
    await this.call('POST', `/api/v1/agent/commands/${encodeURIComponent(commandId)}/complete`, {
      body: { ...body, sign_of_life: false },
      auth: true,
      retry: true,
      signal,
    });
  }

  private async call<T>(method: string, path: string, options: CallOptions): Promise<T> {
    const started = Date.now();
    for (let attempt = 0; ;) {
      if (options.signal?.aborted === true) throw new AbortedError();
      const usedToken = this.token;
      const sentAt = Date.now();
      const headers: Record<string, string> = { accept: 'application/json', [AGENT_VERSION_HEADER]: AGENT_VERSION };
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      if (options.auth && usedToken !== undefined) headers['authorization'] = `Bearer ${usedToken}`;
      if (options.auth && this.instance !== undefined) headers[AGENT_INSTANCE_HEADER] = this.instance;
      const timeout = AbortSignal.timeout(options.timeoutMs ?? this.options.requestTimeoutMs ?? 30_000);
      let status: number;
      let text: string;
      let retryAfter: string | null = null;
      try {
        const response = await this.options.fetch(`${this.base}${path}`, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]),
        });
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        text = await response.text();
      } catch (error) {
        if (aborted(options.signal)) throw new AbortedError();
        await this.failed(describeFailure(error), attempt++, undefined, options, started);
        continue;
      }
      if (status >= 500 || status === 429) {
        await this.failed(`HTTP ${status}`, attempt++, retryAfterMs(retryAfter), options, started);
        continue;
      }
      this.reachable(sentAt);
      if (status >= 200 && status < 300) {
        if (options.signOfLife === true) this.options.onSignOfLife?.(sentAt - SIGN_OF_LIFE_REFRESH_MS);
        try {
          return (text === '' ? {} : JSON.parse(text)) as T;
        } catch {
          throw new HttpError(
            status,
            'INVALID_RESPONSE',
            `The server answered ${method} ${path} with something that is not JSON`,
          );
        }
      }
      const envelope = errorEnvelope(text);
      if (status === 401 && options.auth && usedToken !== undefined) {
        if (this.token !== usedToken) continue; // another call re-enrolled meanwhile: repeat with the new token
        if (this.options.onUnauthorized !== undefined) {
          await this.options.onUnauthorized(usedToken);
          continue;
        }
      }
      if (options.auth && envelope?.code === AGENT_VERSION_INCOMPATIBLE)
        this.options.onIncompatible?.(envelope.message);
      throw new HttpError(
        status,
        envelope?.code ?? `HTTP_${status}`,
        envelope?.message || `HTTP ${status} from ${method} ${path}`,
      );
    }
  }

  private async failed(
    reason: string,
    attempt: number,
    retryAfter: number | undefined,
    options: CallOptions,
    started: number,
  ): Promise<void> {
    if (this.outageSince === undefined) {
      this.outageSince = Date.now();
      this.options.log(`cannot reach the server ${this.base} (${reason}); retrying with backoff`);
    }
    if (!options.retry) throw new UnavailableError(reason);
    // Retry-After is honoured, but never below the first backoff step: "0" must not become a busy loop.
    const delay =
      retryAfter === undefined ? backoffDelay(attempt, this.options.random) : Math.max(retryAfter, BACKOFF_BASE_MS / 2);
    if (options.giveUpAfterMs !== undefined && Date.now() + delay - started > options.giveUpAfterMs)
      throw new UnavailableError(reason);
    await sleep(delay, options.signal);
    if (options.signal?.aborted === true) throw new AbortedError();
  }

  /** An answer to a request sent at `sentAt`: it ends an outage only when it was sent after the outage began. */
  private reachable(sentAt: number): void {
    if (this.outageSince === undefined || sentAt < this.outageSince) return;
    const seconds = ((Date.now() - this.outageSince) / 1000).toFixed(1);
    this.outageSince = undefined;
    this.options.log(`reconnected to the server after ${seconds} s`);
  }
}
