// The viewer channel of one tab (issue 36): ONE WebSocket shared by every live view of the page, its subscriptions
// multiplexed, opened with a fresh single-use token at the `socket_url` the token's answer names. It keeps each
// deployment view's last seq (live-order.ts: duplicates dropped, a gap held and, if not filled within 500 ms,
// subscribed again from the last seq), reconnects with backoff (1 s doubling to 15 s) re-subscribing every topic
// (deployments from their last seq, lists with a snapshot that replaces them), pings every 5 min, stops on a
// `closing` `revoked` (no reconnect), and pauses in a tab hidden for more than a minute (unsubscribed, closed) until
// it is shown again. Without a viewer channel (`socket_url` null) each view falls back to its SSE stream.
// No DOM here (the browser's WebSocket, EventSource and visibility are wired in live.ts), so it is tested in Node.
import { isEnd, receive, startOrder, type Order, type SeqEvent } from './live-order.js';

/** What a live view shows: live, connecting, ended (`closed`), paused in a hidden tab, or its session revoked. */
export type LiveState = 'open' | 'reconnecting' | 'closed' | 'paused' | 'revoked';

export type ResourceType = 'deployments' | 'pending_deployments' | 'targets';

/** One change of a resource list: exactly an SSE resource-stream message. */
export interface ResourceChange {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

export interface DeploymentWatch {
  readonly deploymentId: string;
  /** Events in seq order, each once, from seq 1 (the deployment's end is the last). */
  onEvents(events: readonly SeqEvent[]): void;
  onState(state: LiveState): void;
  /** The channel refused the subscription (its message): the view is not live. */
  onError?(message: string): void;
}

export interface ResourceWatch {
  readonly resourceType: ResourceType;
  /**
   * With: every record first (as `created`), and again after a reconnect, where the first changes `reset` the list
   * (replace, not merge). Without: only changes, and `onResume` after a reconnect (the view reads its page again).
   */
  readonly snapshot: boolean;
  onChanges(changes: readonly ResourceChange[], reset: boolean): void;
  onResume?(): void;
  onState(state: LiveState): void;
  onError?(message: string): void;
}

export interface SocketEvents {
  open(): void;
  message(text: string): void;
  close(): void;
}

export interface SocketHandle {
  send(text: string): void;
  close(): void;
}

/** The SSE stream of one view, for a service without a viewer channel. */
export type SseTarget =
  | { readonly kind: 'deployment'; readonly deploymentId: string; readonly lastSeq: number }
  | { readonly kind: 'resources'; readonly resourceType: ResourceType; readonly snapshot: boolean };

export interface SseEvents {
  events(events: readonly SeqEvent[]): void;
  changes(changes: readonly ResourceChange[]): void;
  state(state: LiveState): void;
}

export interface ChannelEnv {
  /** A fresh single-use token, and where the viewer channel is (null or absent: nowhere). */
  grant(): Promise<{ readonly sse_token: string; readonly socket_url?: string | null }>;
  openSocket(url: string, on: SocketEvents): SocketHandle;
  openSse(target: SseTarget, on: SseEvents): { close(): void };
}

export interface ChannelTiming {
  /** A tab hidden this long pauses its live views. */
  readonly pauseAfterMs: number;
  /** A gap not filled within this is asked for again. */
  readonly gapWaitMs: number;
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  /** API Gateway closes a connection idle for 10 min. */
  readonly pingMs: number;
  /** A socket no view uses is closed after this (a page change unwatches, then watches again). */
  readonly idleCloseMs: number;
  /** After a snapshot's subscription is answered, an empty list is shown if no change came within this. */
  readonly resetWaitMs: number;
}

export const TIMING: ChannelTiming = {
  pauseAfterMs: 60_000,
  gapWaitMs: 500,
  firstDelayMs: 1000,
  maxDelayMs: 15_000,
  pingMs: 5 * 60_000,
  idleCloseMs: 10_000,
  resetWaitMs: 1000,
};

interface DeploymentWatcher {
  readonly kind: 'deployment';
  readonly watch: DeploymentWatch;
  order: Order;
  ended: boolean;
  sse?: { close(): void } | undefined;
}

interface ResourceWatcher {
  readonly kind: 'resources';
  readonly watch: ResourceWatch;
  /** Subscribed before: a new subscription is a resume. */
  subscribedOnce: boolean;
  /** The next changes replace the list. */
  resetPending: boolean;
  sse?: { close(): void } | undefined;
}

type Watcher = DeploymentWatcher | ResourceWatcher;

interface Topic {
  readonly key: string;
  /** The topic's fields on the wire. */
  readonly fields: Readonly<Record<string, unknown>>;
  readonly watchers: Set<Watcher>;
  gapTimer?: ReturnType<typeof setTimeout> | undefined;
  resetTimer?: ReturnType<typeof setTimeout> | undefined;
}

type Status = 'idle' | 'connecting' | 'open' | 'paused' | 'sse';

interface Incoming {
  readonly type?: unknown;
  readonly ref?: unknown;
  readonly deployment_id?: unknown;
  readonly resource_type?: unknown;
  readonly events?: readonly SeqEvent[];
  readonly changes?: readonly ResourceChange[];
  readonly error?: { readonly message?: unknown };
  readonly reason?: unknown;
}

export class LiveChannel {
  private readonly topics = new Map<string, Topic>();
  private status: Status = 'idle';
  /** The service answered no socket_url: every view uses its SSE stream. */
  private sseOnly = false;
  private socket: SocketHandle | undefined;
  /** Each connect, pause and close moves it: a socket or token of an earlier one is ignored. */
  private generation = 0;
  private delay: number;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private hiddenTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly env: ChannelEnv,
    private readonly timing: ChannelTiming = TIMING,
  ) {
    this.delay = timing.firstDelayMs;
  }

  /** Watches a deployment's events from seq 1; the answer stops watching. */
  watchDeployment(watch: DeploymentWatch): () => void {
    const key = `deployment#${watch.deploymentId}`;
    const fields = { topic: 'deployment', deployment_id: watch.deploymentId };
    return this.add(key, fields, { kind: 'deployment', watch, order: startOrder(), ended: false });
  }

  /** Watches a resource list (of the caller's tenant, or all for a global caller); the answer stops watching. */
  watchResources(watch: ResourceWatch): () => void {
    const key = `resources#${watch.resourceType}`;
    const fields = { topic: 'resources', resource_type: watch.resourceType };
    return this.add(key, fields, { kind: 'resources', watch, subscribedOnce: false, resetPending: false });
  }

  /** The tab was hidden or shown: hidden longer than `pauseAfterMs` pauses; shown again resumes. */
  visibility(hidden: boolean): void {
    if (hidden) {
      if (this.hiddenTimer === undefined && this.status !== 'paused')
        this.hiddenTimer = setTimeout(() => this.pause(), this.timing.pauseAfterMs);
      return;
    }
    clearTimeout(this.hiddenTimer);
    this.hiddenTimer = undefined;
    if (this.status === 'paused') this.resume();
  }

  private add(key: string, fields: Record<string, unknown>, watcher: Watcher): () => void {
    clearTimeout(this.idleTimer);
    let topic = this.topics.get(key);
    if (topic === undefined) this.topics.set(key, (topic = { key, fields, watchers: new Set() }));
    topic.watchers.add(watcher);
    if (this.status === 'idle') void this.connect();
    else if (this.status === 'open') {
      watcher.watch.onState('reconnecting');
      this.subscribe(topic);
    } else if (this.status === 'sse') this.startSse(watcher);
    else watcher.watch.onState(this.status === 'paused' ? 'paused' : 'reconnecting');
    return () => this.remove(key, watcher);
  }

  private remove(key: string, watcher: Watcher): void {
    watcher.sse?.close();
    const topic = this.topics.get(key);
    if (topic === undefined || !topic.watchers.delete(watcher)) return;
    if (topic.watchers.size === 0) this.drop(topic);
  }

  /** No view watches the topic any more: unsubscribed; the socket closes a little later if none is left. */
  private drop(topic: Topic): void {
    clearTimeout(topic.gapTimer);
    clearTimeout(topic.resetTimer);
    this.topics.delete(topic.key);
    if (this.status === 'open') this.send({ action: 'unsubscribe', ref: topic.key, ...topic.fields });
    if (this.topics.size === 0) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => {
        if (this.topics.size === 0 && (this.status === 'open' || this.status === 'connecting')) this.stop('idle');
      }, this.timing.idleCloseMs);
    }
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    clearTimeout(this.retryTimer);
    this.status = 'connecting';
    this.eachLive((w) => w.watch.onState('reconnecting'));
    let grant: Awaited<ReturnType<ChannelEnv['grant']>>;
    try {
      grant = await this.env.grant();
    } catch {
      if (generation === this.generation) this.retry();
      return;
    }
    if (generation !== this.generation) return;
    if (grant.socket_url === null || grant.socket_url === undefined) {
      this.sseOnly = true;
      this.status = 'sse';
      this.eachLive((w) => this.startSse(w));
      return;
    }
    const separator = grant.socket_url.includes('?') ? '&' : '?';
    const url = `${grant.socket_url}${separator}sse_token=${encodeURIComponent(grant.sse_token)}`;
    const current = () => generation === this.generation;
    this.socket = this.env.openSocket(url, {
      open: () => {
        if (current()) this.opened();
      },
      message: (text) => {
        if (current()) this.received(text);
      },
      close: () => {
        if (current()) this.dropped();
      },
    });
  }

  private opened(): void {
    this.status = 'open';
    this.delay = this.timing.firstDelayMs;
    for (const topic of this.topics.values()) this.subscribe(topic);
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => this.send({ action: 'ping' }), this.timing.pingMs);
  }

  /** Subscribes (again): a deployment from the lowest last seq of its views, a list with a snapshot if one wants it. */
  private subscribe(topic: Topic): void {
    const watchers = [...topic.watchers];
    const deployments = watchers.filter((w): w is DeploymentWatcher => w.kind === 'deployment' && !w.ended);
    const resources = watchers.filter((w): w is ResourceWatcher => w.kind === 'resources');
    if (deployments.length > 0) {
      const last = Math.min(...deployments.map((w) => w.order.last));
      this.send({ action: 'subscribe', ref: topic.key, ...topic.fields, last_event_id: last });
      return;
    }
    if (resources.length === 0) return;
    for (const w of resources) {
      if (w.subscribedOnce && !w.watch.snapshot) w.watch.onResume?.();
      w.resetPending = w.watch.snapshot;
      w.subscribedOnce = true;
    }
    const snapshot = resources.some((w) => w.resetPending);
    this.send({ action: 'subscribe', ref: topic.key, ...topic.fields, snapshot });
  }

  private received(text: string): void {
    let message: Incoming;
    try {
      message = JSON.parse(text) as Incoming;
    } catch {
      return;
    }
    const topic = typeof message.ref === 'string' ? this.topics.get(message.ref) : undefined;
    if (message.type === 'subscribed' && topic !== undefined) this.subscribed(topic);
    else if (message.type === 'events' && Array.isArray(message.events)) {
      const target = this.topics.get(`deployment#${String(message.deployment_id)}`);
      if (target !== undefined) this.deliver(target, message.events);
    } else if (message.type === 'changes' && Array.isArray(message.changes)) {
      const target = this.topics.get(`resources#${String(message.resource_type)}`);
      if (target !== undefined) this.changed(target, message.changes);
    } else if (message.type === 'error' && topic !== undefined) this.refused(topic, message);
    else if (message.type === 'closing' && message.reason === 'revoked') this.revoked();
  }

  private subscribed(topic: Topic): void {
    for (const w of topic.watchers) if (!(w.kind === 'deployment' && w.ended)) w.watch.onState('open');
    // An empty list sends no change: the old records are replaced by none once the answer has had time to come.
    if ([...topic.watchers].some((w) => w.kind === 'resources' && w.resetPending)) {
      clearTimeout(topic.resetTimer);
      topic.resetTimer = setTimeout(() => this.changed(topic, []), this.timing.resetWaitMs);
    }
  }

  /** Events of a deployment to each of its views, in order; a gap open for `gapWaitMs` is subscribed again. */
  private deliver(topic: Topic, events: readonly SeqEvent[]): void {
    let gap = false;
    for (const w of topic.watchers) {
      if (w.kind !== 'deployment' || w.ended) continue;
      gap = this.apply(w, events) || gap;
    }
    if ([...topic.watchers].every((w) => w.kind === 'deployment' && w.ended)) {
      this.drop(topic);
      return;
    }
    if (!gap) {
      clearTimeout(topic.gapTimer);
      topic.gapTimer = undefined;
    } else if (topic.gapTimer === undefined)
      topic.gapTimer = setTimeout(() => {
        topic.gapTimer = undefined;
        const open = [...topic.watchers].some((w) => w.kind === 'deployment' && !w.ended && w.order.held.size > 0);
        if (open && this.status === 'open' && this.topics.get(topic.key) === topic) this.subscribe(topic);
      }, this.timing.gapWaitMs);
  }

  /** Events through one view's order; whether a gap is left. */
  private apply(w: DeploymentWatcher, events: readonly SeqEvent[]): boolean {
    const result = receive(w.order, events);
    w.order = result.order;
    if (result.apply.length > 0) w.watch.onEvents(result.apply);
    if (result.apply.some(isEnd)) {
      w.ended = true;
      w.sse?.close();
      w.watch.onState('closed');
    }
    return result.gap && !w.ended;
  }

  private changed(topic: Topic, changes: readonly ResourceChange[]): void {
    clearTimeout(topic.resetTimer);
    topic.resetTimer = undefined;
    for (const w of topic.watchers) {
      if (w.kind !== 'resources') continue;
      const reset = w.resetPending;
      w.resetPending = false;
      if (changes.length > 0 || reset) w.watch.onChanges(changes, reset);
    }
  }

  private refused(topic: Topic, message: Incoming): void {
    const text = typeof message.error?.message === 'string' ? message.error.message : 'The live view was refused.';
    for (const w of topic.watchers) {
      w.watch.onError?.(text);
      w.watch.onState('closed');
    }
    clearTimeout(topic.gapTimer);
    clearTimeout(topic.resetTimer);
    this.topics.delete(topic.key);
  }

  /** The credential was revoked or the session ended: every view says so, and nothing reconnects. */
  private revoked(): void {
    const watchers = [...this.topics.values()].flatMap((t) => [...t.watchers]);
    this.stop('idle');
    for (const topic of this.topics.values()) clearTimeout(topic.resetTimer);
    this.topics.clear();
    for (const w of watchers) w.watch.onState('revoked');
  }

  private dropped(): void {
    this.socket = undefined;
    clearInterval(this.pingTimer);
    if (this.topics.size === 0) {
      this.status = 'idle';
      return;
    }
    this.status = 'connecting';
    this.eachLive((w) => w.watch.onState('reconnecting'));
    this.retry();
  }

  private retry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      if (this.topics.size === 0) this.status = 'idle';
      else void this.connect();
    }, this.delay);
    this.delay = Math.min(this.delay * 2, this.timing.maxDelayMs);
  }

  /** Hidden too long: every topic unsubscribed, the socket (or the SSE streams) closed, the views paused. */
  private pause(): void {
    this.hiddenTimer = undefined;
    if (this.status === 'open')
      for (const topic of this.topics.values()) this.send({ action: 'unsubscribe', ref: topic.key, ...topic.fields });
    this.stop('paused');
    this.eachLive((w) => {
      w.sse?.close();
      w.sse = undefined;
      w.watch.onState('paused');
    });
  }

  private resume(): void {
    this.status = 'idle';
    if (this.topics.size === 0) return;
    if (!this.sseOnly) {
      void this.connect();
      return;
    }
    this.status = 'sse';
    this.eachLive((w) => this.startSse(w));
  }

  private stop(status: 'idle' | 'paused'): void {
    this.generation += 1;
    const socket = this.socket;
    this.socket = undefined;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    for (const topic of this.topics.values()) {
      clearTimeout(topic.gapTimer);
      topic.gapTimer = undefined;
    }
    this.status = status;
    this.delay = this.timing.firstDelayMs;
    socket?.close();
  }

  private startSse(w: Watcher): void {
    w.sse?.close();
    if (w.kind === 'deployment') {
      if (w.ended) return;
      const target = { kind: 'deployment', deploymentId: w.watch.deploymentId, lastSeq: w.order.last } as const;
      w.sse = this.env.openSse(target, {
        events: (events) => void this.apply(w, events),
        changes: () => undefined,
        state: (state) => {
          if (!w.ended) w.watch.onState(state);
        },
      });
      return;
    }
    if (w.subscribedOnce && !w.watch.snapshot) w.watch.onResume?.();
    w.subscribedOnce = true;
    const target = { kind: 'resources', resourceType: w.watch.resourceType, snapshot: w.watch.snapshot } as const;
    w.sse = this.env.openSse(target, {
      events: () => undefined,
      changes: (changes) => w.watch.onChanges(changes, false),
      state: (state) => w.watch.onState(state),
    });
  }

  private eachLive(act: (w: Watcher) => void): void {
    for (const topic of this.topics.values())
      for (const w of topic.watchers) if (!(w.kind === 'deployment' && w.ended)) act(w);
  }

  private send(message: Record<string, unknown>): void {
    try {
      this.socket?.send(JSON.stringify(message));
    } catch {
      // A socket closing as we send: its close event reconnects.
    }
  }
}
