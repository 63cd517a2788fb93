// A live event stream of the API (`/deployments/{id}/logs`, `/sse/<resource>`). The streams take a single-use
// `sse_token` instead of the Authorization header, so EventSource's own reconnect (same URL, token spent) cannot
// work: each (re)connection takes a fresh token, renewing the SSE session when it can, and a log stream resumes
// after the last event it received (`last_event_id`), so nothing is lost or shown twice.
import { sseSession } from './sse-session.js';

export interface StreamMessage {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export type StreamState = 'open' | 'reconnecting' | 'closed';

export interface StreamHandle {
  close(): void;
}

const TERMINAL = new Set(['success', 'succeeded', 'failed', 'cancelled', 'rolled_back']);

export const openStream = (
  path: string,
  onMessage: (message: StreamMessage, id: string | undefined) => void,
  options: {
    /** A log stream: resumed after the last event received. */
    resume?: boolean;
    /** A log stream: the id of the last event already seen (the stream starts after it). */
    lastEventId?: string;
    /** A resource stream: list every record when it opens (default true; the deployments list passes false). */
    snapshot?: boolean;
    onState?: (state: StreamState) => void;
  } = {},
): StreamHandle => {
  const grant = sseSession();
  let source: EventSource | undefined;
  let lastId: string | undefined = options.lastEventId;
  let closed = false;
  let delay = 1000;

  const connect = async (): Promise<void> => {
    if (closed) return;
    try {
      const sseToken = (await grant()).sse_token;
      // Closed while the token was on its way (the page moved on): open nothing, or the old stream would feed the
      // new page its events and hold one of the caller's few stream slots.
      if (closed) return;
      const query = new URLSearchParams({ sse_token: sseToken });
      if (options.resume === true && lastId !== undefined) query.set('last_event_id', lastId);
      else if (options.resume !== true && options.snapshot !== false) query.set('snapshot', 'true');
      const separator = path.includes('?') ? '&' : '?';
      const es = new EventSource(`/api/v1${path}${separator}${query.toString()}`);
      source = es;
      es.onopen = () => {
        delay = 1000;
        options.onState?.('open');
      };
      es.onmessage = (e: MessageEvent<string>) => {
        if (closed) return;
        if (e.lastEventId !== '') lastId = e.lastEventId;
        const message = JSON.parse(e.data) as StreamMessage;
        onMessage(message, e.lastEventId === '' ? undefined : e.lastEventId);
        if (message.event === 'state_change' && TERMINAL.has(String(message.data['new_state']))) {
          closed = true;
          es.close();
          options.onState?.('closed');
        }
      };
      es.onerror = () => {
        es.close();
        if (closed) return;
        options.onState?.('reconnecting');
        setTimeout(() => void connect(), delay);
        delay = Math.min(delay * 2, 15_000);
      };
    } catch {
      if (closed) return;
      options.onState?.('reconnecting');
      setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, 15_000);
    }
  };

  void connect();
  return {
    close: () => {
      closed = true;
      source?.close();
    },
  };
};
