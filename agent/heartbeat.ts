// The agent's heartbeats: one loop for every transport. A frame over the socket while it is open, else a request
// over HTTP while polling or busy (channel.ts heartbeatPlan says which and how often); the server's channel answer
// can shorten the cadence, and any change of link or cadence makes the loop plan again at once.
import { sleep } from './backoff.js';
import { cadenceSeconds, heartbeatDelay, heartbeatPlan, type Cadence, type Link } from './channel.js';
import { HttpError, type AgentClient } from './client.js';
import type { ChannelResponse, HeartbeatFrame } from '../protocol/messages.js';

export interface HeartbeatDeps {
  readonly client: AgentClient;
  readonly log: (message: string) => void;
  /** Anything running, waiting, or still to be delivered. */
  readonly busy: () => boolean;
  /** The ids of the commands running now, as a heartbeat names them. */
  readonly running: () => string[];
  /** The open socket, if any. */
  readonly socket: () => WebSocket | undefined;
  /** The agent's target (named in each socket frame). */
  readonly targetId: () => string;
  /** The agent's own cadence (the server's shorter values win). */
  readonly heartbeatMs: number;
  readonly idlePingMs: number;
}

export class Heartbeats {
  /** How the agent is connected; the loop picks its transport and cadence from it. */
  private current: Link = 'connecting';
  private cadence: Cadence;
  private lastBeatAt = 0;
  /** Aborted (and renewed) to make the loop plan again at once: the link or the cadence changed. */
  private replan = new AbortController();

  constructor(private readonly deps: HeartbeatDeps) {
    this.cadence = { busyMs: deps.heartbeatMs, idleMs: deps.idlePingMs };
  }

  get link(): Link {
    return this.current;
  }

  setLink(link: Link): void {
    if (this.current === link) return;
    this.current = link;
    this.planAgain();
  }

  /** The server counted a call as a heartbeat (GET /agent/channel); `at`: as of then (a poll's or completion's). */
  heard(at = Date.now()): void {
    this.lastBeatAt = Math.max(this.lastBeatAt, at);
  }

  /** A channel answer: it counts as a heartbeat, and its cadence is taken where shorter than the agent's own. */
  adopt(channel: ChannelResponse): void {
    this.heard();
    this.cadence = {
      busyMs: cadenceSeconds(this.deps.heartbeatMs / 1000, channel.heartbeat_seconds) * 1000,
      idleMs: cadenceSeconds(this.deps.idlePingMs / 1000, channel.idle_ping_seconds) * 1000,
    };
  }

  /** Makes the loop plan again at once. */
  planAgain(): void {
    this.replan.abort();
    this.replan = new AbortController();
  }

  /** Beats until `signal` aborts. */
  async loop(signal: AbortSignal): Promise<void> {
    const { deps } = this;
    while (!signal.aborted) {
      const plan = heartbeatPlan(this.current, deps.busy(), this.cadence);
      const delay = heartbeatDelay(plan, this.lastBeatAt, Date.now(), this.cadence);
      if (plan.via === 'none' || delay > 0) {
        await sleep(delay, AbortSignal.any([signal, this.replan.signal]));
        continue;
      }
      const running = deps.running();
      this.lastBeatAt = Date.now();
      const socket = deps.socket();
      if (plan.via === 'socket' && socket?.readyState === WebSocket.OPEN) {
        const frame: HeartbeatFrame = { action: 'heartbeat', running_command_ids: running, target_id: deps.targetId() };
        socket.send(JSON.stringify(frame));
        continue;
      }
      try {
        await deps.client.heartbeat(running, signal);
      } catch (error) {
        if (error instanceof HttpError) deps.log(`heartbeat refused: ${error.status} ${error.message}`);
        // unreachable: the client logged the outage once; the next tick tries again
      }
    }
  }
}
