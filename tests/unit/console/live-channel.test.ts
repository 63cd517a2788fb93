// The console's viewer channel (console/src/live-channel.ts) against a fake socket and fake timers: one socket for
// every view, ordering and gaps, reconnects with backoff and resume, revocation, the hidden-tab pause, the SSE
// fallback.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  LiveChannel,
  TIMING,
  type ChannelEnv,
  type LiveState,
  type ResourceChange,
  type SocketEvents,
  type SseEvents,
  type SseTarget,
} from '../../../console/src/live-channel.js';
import type { SeqEvent } from '../../../console/src/live-order.js';

interface FakeSocket {
  readonly url: string;
  readonly on: SocketEvents;
  readonly sent: Record<string, unknown>[];
  closed: boolean;
}

/** A fake service: grants (with or without a socket URL), the sockets opened, the SSE streams opened. */
const fakeEnv = (socketUrl: string | null = 'wss://socket.example/ci') => {
  const sockets: FakeSocket[] = [];
  const sse: { target: SseTarget; on: SseEvents; closed: boolean }[] = [];
  let grants = 0;
  const env: ChannelEnv = {
    grant: () => Promise.resolve({ sse_token: `token-${++grants}`, socket_url: socketUrl }),
    openSocket: (url, on) => {
      const socket: FakeSocket = { url, on, sent: [], closed: false };
      sockets.push(socket);
      return {
        send: (text) => socket.sent.push(JSON.parse(text) as Record<string, unknown>),
        close: () => {
          socket.closed = true;
        },
      };
    },
    openSse: (target, on) => {
      const stream = { target, on, closed: false };
      sse.push(stream);
      return { close: () => (stream.closed = true) };
    },
  };
  const last = () => sockets[sockets.length - 1]!;
  /** The server's side of the newest socket. */
  const server = {
    push: (message: unknown) => last().on.message(JSON.stringify(message)),
    open: async () => {
      await vi.advanceTimersByTimeAsync(0);
      last().on.open();
    },
    drop: () => last().on.close(),
  };
  return { env, sockets, sse, last, server, grants: () => grants };
};

const log = (id: number): SeqEvent => ({ id, event: 'log', data: { log: { message: `line ${id}` } } });
const end = (id: number): SeqEvent => ({ id, event: 'state_change', data: { new_state: 'success' } });
const events = (deploymentId: string, list: readonly SeqEvent[]) => ({
  type: 'events',
  deployment_id: deploymentId,
  events: list,
});

/** A deployment view that records what it was given. */
const deploymentView = (deploymentId = 'd-1') => {
  const seen: number[] = [];
  const states: LiveState[] = [];
  const errors: string[] = [];
  return {
    seen,
    states,
    errors,
    watch: {
      deploymentId,
      onEvents: (list: readonly SeqEvent[]) => seen.push(...list.map((e) => e.id)),
      onState: (state: LiveState) => states.push(state),
      onError: (message: string) => errors.push(message),
    },
  };
};

const resourceView = (snapshot = true) => {
  const batches: { changes: readonly ResourceChange[]; reset: boolean }[] = [];
  const states: LiveState[] = [];
  let resumes = 0;
  return {
    batches,
    states,
    resumes: () => resumes,
    watch: {
      resourceType: 'targets' as const,
      snapshot,
      onChanges: (changes: readonly ResourceChange[], reset: boolean) => batches.push({ changes, reset }),
      onResume: () => (resumes += 1),
      onState: (state: LiveState) => states.push(state),
    },
  };
};

const change = (id: string): ResourceChange => ({
  event: 'created',
  data: { type: 'created', resource_type: 'targets', id, record: { id } },
});

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('one socket per tab', () => {
  it('opens one socket with a fresh token for every view, and subscribes each topic', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const deployment = deploymentView();
    const targets = resourceView();
    // Act
    channel.watchDeployment(deployment.watch);
    channel.watchResources(targets.watch);
    await fake.server.open();
    fake.server.push({ type: 'subscribed', ref: 'deployment#d-1', topic: {} });
    // Assess
    expect(fake.sockets).toHaveLength(1);
    expect(fake.grants()).toBe(1);
    expect(fake.last().url).toBe('wss://socket.example/ci?sse_token=token-1');
    expect(fake.last().sent).toEqual([
      { action: 'subscribe', ref: 'deployment#d-1', topic: 'deployment', deployment_id: 'd-1', last_event_id: 0 },
      { action: 'subscribe', ref: 'resources#targets', topic: 'resources', resource_type: 'targets', snapshot: true },
    ]);
    expect(deployment.states).toEqual(['reconnecting', 'open']);
  });

  it('subscribes a view added to an open socket on that socket', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    channel.watchResources(resourceView().watch);
    await fake.server.open();
    // Act
    channel.watchDeployment(deploymentView('d-2').watch);
    // Assess
    expect(fake.sockets).toHaveLength(1);
    expect(fake.last().sent.map((m) => m['ref'])).toEqual(['resources#targets', 'deployment#d-2']);
  });

  it('unsubscribes a view that stops, and closes the socket once no view is left for a while', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const stop = channel.watchDeployment(deploymentView().watch);
    await fake.server.open();
    // Act
    stop();
    await vi.advanceTimersByTimeAsync(TIMING.idleCloseMs - 1);
    const openBefore = !fake.last().closed;
    await vi.advanceTimersByTimeAsync(1);
    // Assess
    expect(fake.last().sent[1]).toEqual({
      action: 'unsubscribe',
      ref: 'deployment#d-1',
      topic: 'deployment',
      deployment_id: 'd-1',
    });
    expect([openBefore, fake.last().closed]).toEqual([true, true]);
  });

  it('keeps the socket when a page change unwatches and watches again at once', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const stop = channel.watchDeployment(deploymentView().watch);
    await fake.server.open();
    // Act
    stop();
    channel.watchResources(resourceView().watch);
    await vi.advanceTimersByTimeAsync(TIMING.idleCloseMs * 2);
    // Assess
    expect(fake.sockets).toHaveLength(1);
    expect(fake.last().closed).toBe(false);
  });

  it('pings every 5 minutes', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    channel.watchDeployment(deploymentView().watch);
    await fake.server.open();
    // Act
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    // Assess
    expect(fake.last().sent.filter((m) => m['action'] === 'ping')).toHaveLength(2);
  });
});

describe('a deployment’s events', () => {
  it('applies each event once, in order, across pushes and a catch-up that overlap', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const view = deploymentView();
    channel.watchDeployment(view.watch);
    await fake.server.open();
    // Act
    fake.server.push(events('d-1', [log(1), log(2), log(3)]));
    fake.server.push(events('d-1', [log(2), log(3), log(4)]));
    fake.server.push(events('d-1', [log(5)]));
    // Assess
    expect(view.seen).toEqual([1, 2, 3, 4, 5]);
  });

  it('holds a gap that fills within 500 ms, and asks for nothing more', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const view = deploymentView();
    channel.watchDeployment(view.watch);
    await fake.server.open();
    fake.server.push(events('d-1', [log(1)]));
    // Act
    fake.server.push(events('d-1', [log(3)]));
    const held = [...view.seen];
    await vi.advanceTimersByTimeAsync(TIMING.gapWaitMs - 100);
    fake.server.push(events('d-1', [log(2)]));
    await vi.advanceTimersByTimeAsync(1000);
    // Assess
    expect(held).toEqual([1]);
    expect(view.seen).toEqual([1, 2, 3]);
    expect(fake.last().sent.filter((m) => m['action'] === 'subscribe')).toHaveLength(1);
  });

  it('subscribes again from the last seq applied when a gap stays open for 500 ms', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const view = deploymentView();
    channel.watchDeployment(view.watch);
    await fake.server.open();
    fake.server.push(events('d-1', [log(1), log(2)]));
    // Act
    fake.server.push(events('d-1', [log(5)]));
    await vi.advanceTimersByTimeAsync(TIMING.gapWaitMs);
    fake.server.push(events('d-1', [log(3), log(4), log(5), log(6)]));
    // Assess
    expect(fake.last().sent.at(-1)).toMatchObject({ action: 'subscribe', deployment_id: 'd-1', last_event_id: 2 });
    expect(view.seen).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('ends the view at the deployment’s end and unsubscribes', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const view = deploymentView();
    channel.watchDeployment(view.watch);
    await fake.server.open();
    // Act
    fake.server.push(events('d-1', [log(1), end(2)]));
    fake.server.push(events('d-1', [log(3)]));
    // Assess
    expect(view.seen).toEqual([1, 2]);
    expect(view.states.at(-1)).toBe('closed');
    expect(fake.last().sent.at(-1)).toMatchObject({ action: 'unsubscribe', deployment_id: 'd-1' });
  });

  it('shows a refusal (another tenant’s deployment) and stops', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const view = deploymentView();
    channel.watchDeployment(view.watch);
    await fake.server.open();
    // Act
    fake.server.push({
      type: 'error',
      ref: 'deployment#d-1',
      error: { code: 'NOT_FOUND', message: 'Deployment not found', details: [] },
    });
    fake.server.drop();
    await vi.advanceTimersByTimeAsync(60_000);
    // Assess
    expect(view.errors).toEqual(['Deployment not found']);
    expect(view.states.at(-1)).toBe('closed');
    expect(fake.sockets).toHaveLength(1); // nothing left to watch: no reconnect
  });
});

describe('reconnects', () => {
  it('backs off 1 s doubling to 15 s, each try with a fresh token', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    channel.watchDeployment(deploymentView().watch);
    await vi.advanceTimersByTimeAsync(0);
    // Act: every try is refused (closed before it opens)
    const waits: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      const before = fake.sockets.length;
      fake.server.drop();
      let waited = 0;
      while (fake.sockets.length === before) {
        await vi.advanceTimersByTimeAsync(100);
        waited += 100;
      }
      waits.push(waited);
    }
    // Assess
    expect(waits).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
    expect(new Set(fake.sockets.map((s) => s.url)).size).toBe(fake.sockets.length);
  });

  it('resumes a deployment from its last seq and replaces a list with a new snapshot', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const deployment = deploymentView();
    const targets = resourceView();
    channel.watchDeployment(deployment.watch);
    channel.watchResources(targets.watch);
    await fake.server.open();
    fake.server.push(events('d-1', [log(1), log(2), log(3)]));
    fake.server.push({ type: 'changes', resource_type: 'targets', changes: [change('t-1'), change('t-2')] });
    // Act
    fake.server.drop();
    await vi.advanceTimersByTimeAsync(TIMING.firstDelayMs);
    await fake.server.open();
    fake.server.push(events('d-1', [log(3), log(4)]));
    fake.server.push({ type: 'changes', resource_type: 'targets', changes: [change('t-2')] });
    fake.server.push({ type: 'changes', resource_type: 'targets', changes: [change('t-3')] });
    // Assess
    expect(fake.sockets).toHaveLength(2);
    expect(fake.last().sent).toEqual([
      { action: 'subscribe', ref: 'deployment#d-1', topic: 'deployment', deployment_id: 'd-1', last_event_id: 3 },
      { action: 'subscribe', ref: 'resources#targets', topic: 'resources', resource_type: 'targets', snapshot: true },
    ]);
    expect(deployment.seen).toEqual([1, 2, 3, 4]);
    expect(targets.batches.map((b) => [b.changes.map((c) => c.data['id']), b.reset])).toEqual([
      [['t-1', 't-2'], true],
      [['t-2'], true],
      [['t-3'], false],
    ]);
    expect(deployment.states).toEqual(['reconnecting', 'reconnecting', 'reconnecting']);
  });

  it('empties a list whose snapshot after a reconnect has no record', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const targets = resourceView();
    channel.watchResources(targets.watch);
    await fake.server.open();
    fake.server.push({ type: 'changes', resource_type: 'targets', changes: [change('t-1')] });
    // Act
    fake.server.drop();
    await vi.advanceTimersByTimeAsync(TIMING.firstDelayMs);
    await fake.server.open();
    fake.server.push({ type: 'subscribed', ref: 'resources#targets', topic: {} });
    await vi.advanceTimersByTimeAsync(TIMING.resetWaitMs);
    // Assess
    expect(targets.batches.at(-1)).toEqual({ changes: [], reset: true });
  });

  it('tells a list without a snapshot to read its page again after a reconnect', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const list = resourceView(false);
    channel.watchResources(list.watch);
    await fake.server.open();
    // Act
    fake.server.drop();
    await vi.advanceTimersByTimeAsync(TIMING.firstDelayMs);
    await fake.server.open();
    // Assess
    expect(list.resumes()).toBe(1);
    expect(fake.last().sent).toEqual([
      { action: 'subscribe', ref: 'resources#targets', topic: 'resources', resource_type: 'targets', snapshot: false },
    ]);
  });
});

describe('a revoked session', () => {
  it('shows the session ended on every view, closes the socket and never reconnects', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const deployment = deploymentView();
    const targets = resourceView();
    channel.watchDeployment(deployment.watch);
    channel.watchResources(targets.watch);
    await fake.server.open();
    // Act
    fake.server.push({ type: 'closing', reason: 'revoked' });
    fake.server.drop();
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    // Assess
    expect([deployment.states.at(-1), targets.states.at(-1)]).toEqual(['revoked', 'revoked']);
    expect(fake.last().closed).toBe(true);
    expect([fake.sockets.length, fake.grants()]).toEqual([1, 1]);
  });

  it('reconnects at once after an expired connection is closed', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    channel.watchDeployment(deploymentView().watch);
    await fake.server.open();
    // Act
    fake.server.push({ type: 'closing', reason: 'expired' });
    fake.server.drop();
    await vi.advanceTimersByTimeAsync(TIMING.firstDelayMs);
    // Assess
    expect(fake.sockets).toHaveLength(2);
  });
});

describe('a hidden tab', () => {
  it('pauses after a minute hidden (unsubscribed, closed) and catches up when shown again', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const deployment = deploymentView();
    const targets = resourceView();
    channel.watchDeployment(deployment.watch);
    channel.watchResources(targets.watch);
    await fake.server.open();
    fake.server.push(events('d-1', [log(1), log(2)]));
    // Act
    channel.visibility(true);
    await vi.advanceTimersByTimeAsync(TIMING.pauseAfterMs - 1);
    const before = fake.last().closed;
    await vi.advanceTimersByTimeAsync(1);
    const first = fake.last();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const whilePaused = fake.sockets.length;
    channel.visibility(false);
    await fake.server.open();
    fake.server.push(events('d-1', [log(3)]));
    // Assess
    expect(before).toBe(false);
    expect(first.closed).toBe(true);
    expect(first.sent.filter((m) => m['action'] === 'unsubscribe').map((m) => m['ref'])).toEqual([
      'deployment#d-1',
      'resources#targets',
    ]);
    expect(whilePaused).toBe(1);
    expect(deployment.states).toContain('paused');
    expect(targets.states).toContain('paused');
    expect(fake.sockets).toHaveLength(2);
    expect(fake.last().sent[0]).toMatchObject({ deployment_id: 'd-1', last_event_id: 2 });
    expect(fake.last().sent[1]).toMatchObject({ resource_type: 'targets', snapshot: true });
    expect(deployment.seen).toEqual([1, 2, 3]);
  });

  it('does not pause a tab hidden for less than a minute', async () => {
    // Prepare
    const fake = fakeEnv();
    const channel = new LiveChannel(fake.env);
    const view = deploymentView();
    channel.watchDeployment(view.watch);
    await fake.server.open();
    // Act
    channel.visibility(true);
    await vi.advanceTimersByTimeAsync(TIMING.pauseAfterMs - 1000);
    channel.visibility(false);
    await vi.advanceTimersByTimeAsync(TIMING.pauseAfterMs * 2);
    // Assess
    expect(fake.last().closed).toBe(false);
    expect(view.states).not.toContain('paused');
  });
});

describe('without a viewer channel', () => {
  it('opens each view’s SSE stream, from its last seq after a pause', async () => {
    // Prepare
    const fake = fakeEnv(null);
    const channel = new LiveChannel(fake.env);
    const deployment = deploymentView();
    channel.watchDeployment(deployment.watch);
    channel.watchResources(resourceView().watch);
    await vi.advanceTimersByTimeAsync(0);
    fake.sse[0]!.on.events([log(1), log(2)]);
    fake.sse[0]!.on.events([log(2)]);
    // Act
    channel.visibility(true);
    await vi.advanceTimersByTimeAsync(TIMING.pauseAfterMs);
    channel.visibility(false);
    // Assess
    expect(fake.sockets).toHaveLength(0);
    expect(fake.sse.map((s) => [s.target, s.closed])).toEqual([
      [{ kind: 'deployment', deploymentId: 'd-1', lastSeq: 0 }, true],
      [{ kind: 'resources', resourceType: 'targets', snapshot: true }, true],
      [{ kind: 'deployment', deploymentId: 'd-1', lastSeq: 2 }, false],
      [{ kind: 'resources', resourceType: 'targets', snapshot: true }, false],
    ]);
    expect(deployment.seen).toEqual([1, 2]);
  });
});
