// The pure parts of the agent's push channel (issue #12): reading the server's frames, choosing how and how often
// to send a heartbeat, and draining the inbox one request at a time. connection.ts, heartbeat.ts and inbox.ts use
// them with the socket and the HTTP client.
import type { AgentCommand } from '../protocol/messages.js';

/** How the agent is connected right now. */
export type Link = 'socket' | 'polling' | 'connecting';

export type Transport = 'auto' | 'websocket' | 'polling';
export const TRANSPORTS: readonly Transport[] = ['auto', 'websocket', 'polling'];

export type ServerMessage =
  | { readonly type: 'wake' }
  /** A command pushed to this connection, already claimed for it: run it (at most once per id, as any command). */
  | { readonly type: 'command'; readonly command: AgentCommand }
  | { readonly type: 'replaced' }
  | { readonly type: 'revoked' }
  | { readonly type: 'error'; readonly code: string; readonly message: string }
  | { readonly type: 'unknown'; readonly name: string };

/** A server -> agent text frame. Anything that is not a known message is 'unknown' (named for the log). */
export const parseServerMessage = (data: unknown): ServerMessage => {
  if (typeof data !== 'string') return { type: 'unknown', name: '(binary frame)' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { type: 'unknown', name: '(not JSON)' };
  }
  const type = (parsed as { type?: unknown } | null)?.type;
  if (type === 'wake' || type === 'replaced' || type === 'revoked') return { type };
  if (type === 'command') {
    const command = (parsed as { command?: unknown }).command;
    if (typeof command === 'object' && command !== null && typeof (command as { id?: unknown }).id === 'string')
      return { type: 'command', command: command as AgentCommand };
    return { type: 'unknown', name: 'command (without a command)' };
  }
  if (type === 'error') {
    const error = (parsed as { error?: { code?: unknown; message?: unknown } }).error;
    return {
      type: 'error',
      code: typeof error?.code === 'string' ? error.code : 'UNKNOWN',
      message: typeof error?.message === 'string' ? error.message : '',
    };
  }
  return { type: 'unknown', name: typeof type === 'string' ? type.slice(0, 40) : '(no type)' };
};

export interface Cadence {
  /** While anything runs, waits or is still to be delivered. */
  readonly busyMs: number;
  /** While idle with the socket open. */
  readonly idleMs: number;
}

export interface HeartbeatPlan {
  readonly via: 'socket' | 'http' | 'none';
  readonly intervalMs: number;
}

/**
 * Socket open: a frame every busyMs while busy, every idleMs while idle. Polling: HTTP every busyMs, as before the
 * channel existed. Reconnecting: HTTP every busyMs while busy (a working agent must not look dead), else nothing.
 */
export const heartbeatPlan = (link: Link, busy: boolean, cadence: Cadence): HeartbeatPlan => {
  if (link === 'socket') return { via: 'socket', intervalMs: busy ? cadence.busyMs : cadence.idleMs };
  if (link === 'polling' || busy) return { via: 'http', intervalMs: cadence.busyMs };
  return { via: 'none', intervalMs: cadence.busyMs };
};

/** How long the heartbeat loop sleeps: until the next beat is due, but never longer than busyMs (it re-plans). */
export const heartbeatDelay = (plan: HeartbeatPlan, lastBeatAt: number, now: number, cadence: Cadence): number =>
  plan.via === 'none' ? cadence.busyMs : Math.min(Math.max(0, lastBeatAt + plan.intervalMs - now), cadence.busyMs);

/** The shorter of the agent's own setting and the server's (a missing server value is Infinity). */
export const cadenceSeconds = (own: number, server: number): number => Math.min(own, server);

/**
 * Runs `drain` one at a time. A request while a drain runs makes exactly one more drain after it (requests coalesce),
 * so a wake is never lost and never runs two drains at once.
 */
export class Drainer {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly drain: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  get draining(): boolean {
    return this.running !== undefined;
  }

  /** Resolves when the drains this request caused are done. */
  request(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop();
    return this.running;
  }

  private async loop(): Promise<void> {
    for (;;) {
      this.again = false;
      try {
        await this.drain();
      } catch (error) {
        this.onError(error);
      }
      if (!this.again) {
        this.running = undefined;
        return;
      }
    }
  }
}
