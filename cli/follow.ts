// Following a deployment to its end over the log stream: POST /auth/sse-token, GET /deployments/{id}/logs, and after
// a dropped connection (or a stream the server ended early) a new token and `last_event_id` = the last id seen, so no
// event is shown twice or lost. The outcome is then read back with GET /deployments/{id}.
import { sleep, type Api, type Sleep } from './api.js';
import { CliError, EXIT, UnreachableError } from './errors.js';
import { readSse, SseParser } from './sse.js';

export const TERMINAL_STATES = ['success', 'failed', 'cancelled', 'rolled_back'] as const;
export const isTerminal = (state: unknown): boolean => (TERMINAL_STATES as readonly unknown[]).includes(state);

/** A message of the stream: `{event, data}` with `data.type === event`. */
export interface StreamEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export interface Deployment {
  readonly id: string;
  readonly state: string;
  readonly [field: string]: unknown;
}

/** Reconnect bookkeeping: where to resume, and how long to wait before the next attempt. */
export class Reconnect {
  private failures = 0;
  constructor(
    /** Attempts in a row without a single event before giving up. */
    readonly maxFailures = 8,
    readonly baseMs = 500,
    readonly maxMs = 8000,
  ) {}

  /** An event arrived: the connection works, the count starts over. */
  progressed(): void {
    this.failures = 0;
  }

  /** The connection dropped; the wait before the next attempt, or undefined to give up. */
  dropped(): number | undefined {
    this.failures += 1;
    if (this.failures > this.maxFailures) return undefined;
    return Math.min(this.maxMs, this.baseMs * 2 ** (this.failures - 1));
  }
}

/** The stream's path, with the resume point when there is one. */
export const streamPath = (id: string, token: string, lastEventId: string | undefined): string =>
  `/deployments/${encodeURIComponent(id)}/logs?sse_token=${encodeURIComponent(token)}${
    lastEventId === undefined ? '' : `&last_event_id=${encodeURIComponent(lastEventId)}`
  }`;

export interface FollowOptions {
  readonly onEvent?: (event: StreamEvent) => void;
  /** Told when the connection dropped and is being opened again. */
  readonly onReconnect?: (lastEventId: string | undefined, waitMs: number) => void;
  readonly signal?: AbortSignal;
  readonly wait?: Sleep;
  readonly reconnect?: Reconnect;
}

/** Follows deployment `id` until its terminal state_change; answers the deployment as GET shows it then. */
export const followDeployment = async (api: Api, id: string, options: FollowOptions = {}): Promise<Deployment> => {
  const wait = options.wait ?? sleep;
  const reconnect = options.reconnect ?? new Reconnect();
  const parser = new SseParser();
  let ended = false;
  while (!ended) {
    try {
      const { sse_token } = await api.post<{ sse_token: string }>(
        '/auth/sse-token',
        {},
        { retry: true, signal: options.signal },
      );
      const response = await api.stream(streamPath(id, sse_token, parser.lastEventId), options.signal);
      parser.reset();
      if (response.body === null) throw new UnreachableError('the log stream answered without a body');
      for await (const message of readSse(response.body, parser)) {
        let parsed: StreamEvent;
        try {
          parsed = JSON.parse(message.data) as StreamEvent;
        } catch {
          continue;
        }
        reconnect.progressed();
        options.onEvent?.(parsed);
        if (parsed.event === 'state_change' && isTerminal(parsed.data?.['new_state'])) {
          ended = true;
          break;
        }
      }
      if (ended) break;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      // A refusal (the deployment is not there, the credential lost its permission) is final; a network failure is
      // retried below (undici reports a cut body as a TypeError "terminated").
      if (error instanceof CliError && error.exitCode !== EXIT.unreachable) throw error;
    }
    // The stream ended without the terminal event (dropped, or ended early by the server): finished meanwhile?
    const now = await api.get<Deployment>(`/deployments/${encodeURIComponent(id)}`, { signal: options.signal });
    if (isTerminal(now.state)) return now;
    const delay = reconnect.dropped();
    if (delay === undefined) throw new UnreachableError(`the log stream of ${id} keeps dropping; giving up`);
    options.onReconnect?.(parser.lastEventId, delay);
    await wait(delay, options.signal);
  }
  // The record is written before its terminal event is sent; read it back (briefly retried if it lags).
  for (let attempt = 0; ; attempt += 1) {
    const final = await api.get<Deployment>(`/deployments/${encodeURIComponent(id)}`, { signal: options.signal });
    if (isTerminal(final.state) || attempt >= 10) return final;
    await wait(500, options.signal);
  }
};
