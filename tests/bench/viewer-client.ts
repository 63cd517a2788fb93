// A viewer on the channel (issue 36), for the benchmarks: a single-use sse_token from POST /auth/sse-token, a
// WebSocket to its `socket_url` (the local front's socket path when the answer has none), JSON frames both ways,
// with what each frame costs in the cloud counted (messages each way: API Gateway bills both).
import { WebSocket } from 'ws';

export interface ViewerFrame {
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface Viewer {
  /** Sends a client message; answers the first reply of `type` (with the same `ref` when one is given). */
  request(message: Record<string, unknown>, type: string): Promise<ViewerFrame>;
  /** Called with every frame and the time (Date.now()) it arrived. */
  onFrame(listener: (frame: ViewerFrame, receivedAt: number) => void): void;
  /** Frames sent and received so far. */
  readonly counts: { sent: number; received: number };
  close(): Promise<void>;
}

type Call = (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>>;

/** The channel's URL and a fresh token for it. */
export const viewerToken = async (baseUrl: string, call: Call) => {
  const answer = await call('POST', '/auth/sse-token', {});
  const socketUrl =
    typeof answer['socket_url'] === 'string'
      ? answer['socket_url']
      : `${baseUrl.replace(/^http/, 'ws')}/api/v1/agent/socket`;
  return { token: answer['sse_token'] as string, socketUrl };
};

let refs = 0;

export const openViewer = async (baseUrl: string, call: Call): Promise<Viewer> => {
  const { token, socketUrl } = await viewerToken(baseUrl, call);
  const socket = new WebSocket(`${socketUrl}?sse_token=${encodeURIComponent(token)}`);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`the viewer channel refused the handshake: ${response.statusCode}`)),
    );
  });
  const counts = { sent: 0, received: 0 };
  const listeners: ((frame: ViewerFrame, receivedAt: number) => void)[] = [];
  socket.on('message', (data) => {
    const receivedAt = Date.now();
    counts.received += 1;
    const frame = JSON.parse(String(data)) as ViewerFrame;
    for (const listener of listeners) listener(frame, receivedAt);
  });
  return {
    counts,
    onFrame: (listener) => void listeners.push(listener),
    request: (message, type) =>
      new Promise<ViewerFrame>((resolve, reject) => {
        refs += 1;
        const ref = `r${refs}`;
        const timer = setTimeout(() => reject(new Error(`no ${type} for ${JSON.stringify(message)}`)), 30_000);
        listeners.push((frame) => {
          if (frame['ref'] !== ref) return;
          clearTimeout(timer);
          if (frame.type === type) resolve(frame);
          else reject(new Error(`${JSON.stringify(message)} answered ${JSON.stringify(frame)}`));
        });
        counts.sent += 1;
        socket.send(JSON.stringify({ ...message, ref }));
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once('close', () => resolve());
        socket.close();
      }),
  };
};
