// The tab's live views (issue 36): the one viewer channel of live-channel.ts, wired to the browser's WebSocket, the
// SSE streams as its fallback (stream.ts), and the page's visibility (a tab hidden for a minute pauses). A test may
// shorten the timings by setting `window.__deployerLiveTiming` before the page's script runs; nothing else sets it.
import {
  LiveChannel,
  TIMING,
  type ChannelEnv,
  type ChannelTiming,
  type DeploymentWatch,
  type ResourceWatch,
} from './live-channel.js';
import { sseSession } from './sse-session.js';
import { openStream } from './stream.js';

export type { LiveState, ResourceChange } from './live-channel.js';

declare global {
  interface Window {
    __deployerLiveTiming?: Partial<ChannelTiming>;
  }
}

/** The channel's URL as a WebSocket URL (a path or an http(s) URL is taken on the page's origin's terms). */
const socketUrl = (url: string): string => {
  const absolute = new URL(url, window.location.href);
  if (absolute.protocol === 'http:') absolute.protocol = 'ws:';
  else if (absolute.protocol === 'https:') absolute.protocol = 'wss:';
  return absolute.toString();
};

const browserEnv = (): ChannelEnv => ({
  grant: sseSession(),
  openSocket: (url, on) => {
    const ws = new WebSocket(socketUrl(url));
    ws.onopen = () => on.open();
    ws.onmessage = (e: MessageEvent<unknown>) => {
      if (typeof e.data === 'string') on.message(e.data);
    };
    ws.onclose = () => on.close();
    return {
      send: (text) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(text);
      },
      close: () => ws.close(),
    };
  },
  openSse: (target, on) =>
    target.kind === 'deployment'
      ? openStream(
          `/deployments/${encodeURIComponent(target.deploymentId)}/logs`,
          (message, id) => on.events([{ id: Number(id), ...message }]),
          {
            resume: true,
            ...(target.lastSeq > 0 ? { lastEventId: String(target.lastSeq) } : {}),
            onState: on.state,
          },
        )
      : openStream(`/sse/${target.resourceType}`, (message) => on.changes([message]), {
          snapshot: target.snapshot,
          onState: on.state,
        }),
});

let channel: LiveChannel | undefined;

const theChannel = (): LiveChannel => {
  if (channel !== undefined) return channel;
  const live = new LiveChannel(browserEnv(), { ...TIMING, ...window.__deployerLiveTiming });
  const hidden = () => document.visibilityState === 'hidden';
  document.addEventListener('visibilitychange', () => live.visibility(hidden()));
  if (hidden()) live.visibility(true);
  return (channel = live);
};

/** A deployment's events, in seq order and each once, from its first; the answer stops watching. */
export const watchDeployment = (watch: DeploymentWatch): (() => void) => theChannel().watchDeployment(watch);

/** A resource list's changes (and its records first with `snapshot`); the answer stops watching. */
export const watchResources = (watch: ResourceWatch): (() => void) => theChannel().watchResources(watch);
