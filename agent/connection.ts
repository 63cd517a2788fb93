// How the agent hears of work: it asks for the server's channel (GET /api/v1/agent/channel), opens the WebSocket and
// serves it until it closes, then again. A wake drains the inbox, a pushed command runs at once. In auto mode it
// falls back to HTTP long polling when the server offers no socket or the socket cannot be opened 3 times in a row,
// and tries the socket again every so often.
//
// loop -> GET /agent/channel -> open the socket -> serve it (drain on open and on every wake) -> closed: reconnect
//         (no socket: long polling, the socket tried again every socketRetryMs; 10 min unless it worked before)
import { backoffDelay, sleep } from './backoff.js';
import type { ServerMessage } from './channel.js';
import { AbortedError, HttpError, type AgentClient } from './client.js';
import type { Heartbeats } from './heartbeat.js';
import type { Inbox } from './inbox.js';
import type { ChannelResponse } from '../protocol/messages.js';
import type { AgentSettings } from './settings.js';
import { describeClose, openSocket, serveSocket, type OpenedSocket } from './socket.js';
import type { Workload } from './workload.js';

export interface ConnectionDeps {
  readonly client: AgentClient;
  readonly settings: Pick<
    AgentSettings,
    'server' | 'transport' | 'replacedWaitMs' | 'socketRetryMs' | 'socketRetryAfterOutageMs'
  >;
  /** Aborted when the agent stops. */
  readonly stopSignal: AbortSignal;
  readonly heartbeats: Heartbeats;
  readonly inbox: Inbox;
  readonly work: Workload;
  readonly log: (message: string) => void;
  /** The WebSocket handshake's headers, as they are now (the token may change). */
  readonly handshakeHeaders: () => Record<string, string>;
  /** Every channel answer. */
  readonly onChannel: (channel: ChannelResponse) => void;
}

/** Consecutive failures to open the socket (while GET /agent/channel works) before auto falls back to polling. */
const OPEN_FAILURES_BEFORE_FALLBACK = 3;
/** A connection that stayed up this long ends a streak of drops: the next drop reconnects at once again. */
const STABLE_CONNECTION_MS = 60_000;

type SessionEnd = {
  readonly code: number;
  readonly reason: string;
  readonly replaced: boolean;
  readonly revoked: boolean;
  readonly lastedMs: number;
};

export const minutes = (ms: number): string =>
  ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}` : `${ms / 1000} s`;

export class Connection {
  private current: WebSocket | undefined;
  private endSession: ((code: number, reason: string) => void) | undefined;
  /** The socket opened at least once in this process (its failures since are an outage, not a blocking proxy). */
  private everOpened = false;
  private readonly unknownMessages = new Set<string>();

  constructor(private readonly deps: ConnectionDeps) {}

  /** The open socket, if any. */
  get socket(): WebSocket | undefined {
    return this.current;
  }

  /** Closes the session's socket (and waits at most a while for the close handshake); nothing without one. */
  end(code: number, reason: string): void {
    this.endSession?.(code, reason);
  }

  /**
   * Asks for the server's channel, opens the socket and serves it until it closes, then again. Each attempt starts
   * with GET /agent/channel (whose 401 goes into the unauthorized flow). In auto mode, falls back to long polling
   * when the server offers no socket or the socket cannot be opened 3 times in a row.
   */
  async loop(): Promise<void> {
    const { deps } = this;
    const stop = deps.stopSignal;
    let drops = 0;
    let ready: OpenedSocket | undefined;
    const attempts = { openFailures: 0, refusals: 0 };
    while (!stop.aborted) {
      if (ready === undefined) {
        const next = await this.connect(attempts);
        if (next === 'stop') break;
        if (next === 'again') continue;
        if ('resumed' in next) {
          ready = next.resumed; // served unless the agent began to stop meanwhile
          continue;
        }
        ready = next;
      }
      attempts.openFailures = 0;
      const end = await this.session(ready);
      ready = undefined;
      if (stop.aborted) {
        deps.log(`WebSocket closed (${describeClose(end.code, end.reason)})`);
        break;
      }
      if (end.lastedMs >= STABLE_CONNECTION_MS) drops = 0;
      if (end.replaced) {
        deps.log(
          `WebSocket closed (${describeClose(end.code, end.reason)}); connecting again in ${minutes(deps.settings.replacedWaitMs)}`,
        );
        await sleep(deps.settings.replacedWaitMs, stop);
      } else if (end.revoked) {
        deps.log(`WebSocket closed (${describeClose(end.code, end.reason)}); checking the agent token`);
      } else {
        const delay = drops === 0 ? 0 : backoffDelay(drops - 1);
        drops += 1;
        deps.log(
          `WebSocket closed (${describeClose(end.code, end.reason)}); reconnecting${delay === 0 ? '' : ` in ${(delay / 1000).toFixed(1)} s`}`,
        );
        await sleep(delay, stop);
      }
    }
    ready?.ws.close(1000, 'agent stopping'); // opened as the agent began to stop
    deps.heartbeats.setLink('connecting');
  }

  /**
   * One attempt at a socket: the channel, then the socket it names, or the one the fallback opened once the socket
   * worked again (`resumed`). 'again' after a failure waited out, 'stop' when the agent stops.
   */
  private async connect(attempts: {
    openFailures: number;
    refusals: number;
  }): Promise<OpenedSocket | { readonly resumed: OpenedSocket } | 'again' | 'stop'> {
    const { deps } = this;
    const stop = deps.stopSignal;
    const { server, transport } = deps.settings;
    let channel: ChannelResponse;
    try {
      channel = await deps.client.channel(stop);
      attempts.refusals = 0;
    } catch (error) {
      if (stop.aborted || error instanceof AbortedError) return 'stop';
      if (error instanceof HttpError && error.status === 404 && transport === 'auto') {
        // A server from before the channel existed.
        return this.resume(`${server}/api/v1/agent/channel`, 'the server has no channel endpoint');
      }
      deps.log(`asking for the channel failed: ${(error as Error).message}`);
      await sleep(backoffDelay(attempts.refusals++), stop);
      return 'again';
    }
    deps.onChannel(channel);
    if (channel.socket_url === null) {
      if (transport === 'auto') return this.resume(`${server}/api/v1/agent/channel`, 'the server offers no WebSocket');
      if (attempts.refusals === 0) deps.log('the server offers no WebSocket; asking again (transport websocket)');
      await sleep(backoffDelay(attempts.refusals++), stop);
      return 'again';
    }
    const opened = await openSocket(channel.socket_url, deps.handshakeHeaders(), stop);
    if (!('error' in opened)) return opened;
    if (stop.aborted) return 'stop';
    attempts.openFailures += 1;
    if (transport === 'auto' && attempts.openFailures >= OPEN_FAILURES_BEFORE_FALLBACK) {
      attempts.openFailures = 0;
      return this.resume(channel.socket_url, opened.error);
    }
    if (attempts.openFailures === 1 || attempts.openFailures % 10 === 0)
      deps.log(
        `could not open the WebSocket ${channel.socket_url} (${opened.error}); trying again (${attempts.openFailures} failed in a row)`,
      );
    await sleep(backoffDelay(attempts.openFailures - 1), stop);
    return 'again';
  }

  /** The fallback, then the socket it opened ('again' when it ended without one: the agent stops). */
  private async resume(url: string, reason: string): Promise<{ readonly resumed: OpenedSocket } | 'again'> {
    const opened = await this.fallback(url, reason);
    return opened === undefined ? 'again' : { resumed: opened };
  }

  /** Serves an open socket until it closes: drains at once and on every wake, heartbeats ride it. */
  private async session({ ws, url }: OpenedSocket): Promise<SessionEnd> {
    const { deps } = this;
    let replaced = false;
    let revoked = false;
    this.current = ws;
    this.everOpened = true;
    deps.heartbeats.setLink('socket');
    deps.log(`connected over WebSocket ${url}`);
    const onMessage = (message: ServerMessage) => {
      switch (message.type) {
        case 'wake':
          deps.inbox.drain();
          return;
        case 'command':
          // Claimed for this connection by the server: no claim request. A second push of a command this process
          // already handles (the server's periodic re-push of an unacknowledged one) is ignored.
          if (!deps.work.handles(message.command.id)) void deps.work.receive(message.command);
          return;
        case 'replaced':
          replaced = true;
          deps.log(
            `another agent process connected with this target's token and replaced this connection; connecting again in ${minutes(deps.settings.replacedWaitMs)} (run one agent per target)`,
          );
          return;
        case 'revoked':
          revoked = true;
          deps.log('the server revoked this connection (the target was deleted)');
          return;
        case 'error':
          deps.log(`the server refused a message: ${message.code} ${message.message}`);
          return;
        case 'unknown':
          if (!this.unknownMessages.has(message.name)) {
            this.unknownMessages.add(message.name);
            deps.log(`ignored a message of unknown type ${message.name} from the server`);
          }
      }
    };
    const close = await serveSocket(ws, {
      onMessage,
      onCloser: (closer) => (this.endSession = closer),
      onEnd: () => {
        if (this.current !== ws) return;
        this.current = undefined;
        this.endSession = undefined;
        deps.heartbeats.setLink('connecting');
      },
      onReady: () => deps.inbox.drain(),
    });
    return { ...close, replaced, revoked };
  }

  /**
   * Long polling while the socket cannot be used: one log line, then the socket tried again every socketRetryMs.
   * Resolves with the socket once it opens (the poll loop ended after its current poll), or undefined on stop.
   */
  private async fallback(url: string, reason: string): Promise<OpenedSocket | undefined> {
    const { deps } = this;
    const stop = deps.stopSignal;
    const { socketRetryMs, socketRetryAfterOutageMs } = deps.settings;
    const retryMs = this.everOpened ? Math.min(socketRetryMs, socketRetryAfterOutageMs) : socketRetryMs;
    deps.log(
      `WebSocket unavailable at ${url} (${reason}); falling back to HTTP long polling (GET /api/v1/agent/commands?wait=${deps.inbox.pollWait}); trying the WebSocket again in ${minutes(retryMs)}`,
    );
    deps.heartbeats.setLink('polling');
    let polling = true;
    const loop = deps.inbox.pollLoop(() => polling);
    try {
      while (!stop.aborted) {
        await sleep(retryMs, stop);
        if (stop.aborted) break;
        let channel: ChannelResponse;
        try {
          channel = await deps.client.channel(stop);
        } catch {
          continue;
        }
        deps.onChannel(channel);
        if (channel.socket_url === null) continue;
        const opened = await openSocket(channel.socket_url, deps.handshakeHeaders(), stop);
        if ('error' in opened) continue;
        polling = false;
        await loop; // its current poll ends first: no poll and drain at once
        deps.log(`WebSocket available again at ${opened.url}; stopped HTTP long polling`);
        return opened;
      }
      return undefined;
    } finally {
      polling = false;
      await loop;
    }
  }
}
