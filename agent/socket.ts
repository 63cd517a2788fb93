// The WebSocket itself: opening it with the agent's credentials (resolving once it is open, or with why it is not),
// and serving an open one until it closes, each server frame parsed and handed on. What the frames mean and when to
// reconnect is connection.ts's business.
import { parseServerMessage, type ServerMessage } from './channel.js';

export type OpenedSocket = { readonly ws: WebSocket; readonly url: string };

/** How a served socket ended. */
export interface SocketClose {
  readonly code: number;
  readonly reason: string;
  readonly lastedMs: number;
}

const SOCKET_OPEN_TIMEOUT_MS = 10_000;
/** How long a close handshake may take before the agent stops waiting for it. */
const SOCKET_CLOSE_TIMEOUT_MS = 3_000;

export const describeClose = (code: number, reason: string): string =>
  `code ${code}${reason === '' ? '' : ` ${reason}`}`;

/** Opens a socket with these handshake headers; resolves once it is open, or with why it is not. */
export const openSocket = (
  url: string,
  headers: Readonly<Record<string, string>>,
  stop: AbortSignal,
): Promise<OpenedSocket | { error: string }> => {
  if (stop.aborted) return Promise.resolve({ error: 'the agent is stopping' });
  if (typeof globalThis.WebSocket !== 'function')
    return Promise.resolve({ error: 'this Node.js has no WebSocket (Node 22 or later needed)' });
  let ws: WebSocket;
  try {
    ws = new WebSocket(url, { headers });
  } catch (error) {
    return Promise.resolve({ error: (error as Error).message });
  }
  return new Promise((resolve) => {
    const done = (result: OpenedSocket | { error: string }) => {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
      ws.removeEventListener('open', onOpen);
      ws.removeEventListener('error', onError);
      ws.removeEventListener('close', onClose);
      if ('error' in result && ws.readyState !== WebSocket.CLOSED) ws.close();
      resolve(result);
    };
    const onOpen = () => done({ ws, url });
    // Node's WebSocket reports a refused handshake (non-101, e.g. a bad token or a proxy) only as an error event.
    const onError = (event: Event) =>
      done({ error: (event as Event & { message?: string }).message || 'the connection failed' });
    const onClose = (event: Event & { code: number; reason: string }) =>
      done({ error: `closed during the handshake, code ${event.code}` });
    const onStop = () => done({ error: 'the agent is stopping' });
    const timer = setTimeout(() => done({ error: 'the handshake timed out' }), SOCKET_OPEN_TIMEOUT_MS);
    ws.addEventListener('open', onOpen);
    ws.addEventListener('error', onError);
    ws.addEventListener('close', onClose);
    stop.addEventListener('abort', onStop, { once: true });
  });
};

export interface SocketHandlers {
  /** Every text frame the server sends, parsed. */
  readonly onMessage: (message: ServerMessage) => void;
  /** Called at once with the function that closes this socket (waiting at most a while for the close handshake). */
  readonly onCloser: (close: (code: number, reason: string) => void) => void;
  /** The socket closed (or was given up), before the returned promise resolves. */
  readonly onEnd: () => void;
  /** The socket is open and served (not closed before use). */
  readonly onReady: () => void;
}

/** Serves an open socket until it closes: frames go to `onMessage`; resolves with how it ended. */
export const serveSocket = (ws: WebSocket, handlers: SocketHandlers): Promise<SocketClose> => {
  const openedAt = Date.now();
  return new Promise((resolve) => {
    let closeTimer: NodeJS.Timeout | undefined;
    const finish = (code: number, reason: string) => {
      clearTimeout(closeTimer);
      ws.removeEventListener('message', onMessage);
      ws.removeEventListener('close', onClose);
      ws.removeEventListener('error', onError);
      handlers.onEnd();
      resolve({ code, reason, lastedMs: Date.now() - openedAt });
    };
    const onMessage = (event: MessageEvent) => handlers.onMessage(parseServerMessage(event.data));
    const onClose = (event: Event & { code: number; reason: string }) => finish(event.code, event.reason);
    // An error on an open socket is followed by a close; if that never comes, the socket is given up.
    const onError = () => {
      closeTimer ??= setTimeout(() => finish(1006, 'connection error'), SOCKET_CLOSE_TIMEOUT_MS);
    };
    handlers.onCloser((code, reason) => {
      closeTimer ??= setTimeout(() => finish(code, reason), SOCKET_CLOSE_TIMEOUT_MS);
      ws.close(code, reason);
    });
    ws.addEventListener('message', onMessage);
    ws.addEventListener('close', onClose);
    ws.addEventListener('error', onError);
    if (ws.readyState === WebSocket.CLOSING || ws.readyState === WebSocket.CLOSED) finish(1006, 'closed before use');
    else handlers.onReady();
  });
};
