import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../../domain/deployments/events.js';
import type { Sleep } from '../../../../domain/streams/ports.js';
import type {
  ViewerConnection,
  ViewerMessage,
  ViewerPush,
  ViewerRegistry,
  ViewerTopic,
} from '../../../../domain/streams/viewer-ports.js';
import { eventsMessages, viewerEvent } from '../../../../domain/streams/viewer-messages.js';
import { publishingEvents, viewerPublisher } from '../../../../domain/streams/viewer-publish.js';
import { FakeClock } from '../../../fakes/clock.js';

const connection = (connectionId: string): ViewerConnection => ({
  connectionId,
  userId: 'u1',
  tenantId: null,
  permissions: ['deployments:read'],
  credential: { kind: 'session', sseSessionId: 's1', apiKeyId: null },
  connectedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T02:00:00.000Z',
});

/** The registry's subscriber query and disconnect, counted. */
class Registry implements Pick<ViewerRegistry, 'subscribers' | 'disconnect'> {
  queries = 0;
  disconnected: string[] = [];
  fail = false;
  constructor(public watching: Map<string, ViewerConnection[]> = new Map()) {}
  async subscribers(topic: ViewerTopic): Promise<readonly ViewerConnection[]> {
    this.queries += 1;
    if (this.fail) throw new Error('registry down');
    return topic.kind === 'deployment' ? (this.watching.get(topic.deploymentId) ?? []) : [];
  }
  async disconnect(connectionId: string): Promise<void> {
    this.disconnected.push(connectionId);
  }
}

/** Records what each connection was sent; `gone` ids answer gone, `hang` never answers. */
class Push implements Pick<ViewerPush, 'send'> {
  sent: { connectionId: string; message: ViewerMessage }[] = [];
  constructor(
    private readonly gone: ReadonlySet<string> = new Set(),
    private readonly hang = false,
  ) {}
  async send(connectionId: string, message: ViewerMessage): Promise<'sent' | 'gone'> {
    if (this.hang) return new Promise(() => undefined);
    if (this.gone.has(connectionId)) return 'gone';
    this.sent.push({ connectionId, message });
    return 'sent';
  }
}

const realWait: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });

const log = (seq: number, message = `line ${seq}`): StoredEvent => ({
  seq,
  at: '2026-01-01T00:00:01.000Z',
  event: {
    type: 'log',
    log: {
      timestamp: '2026-01-01T00:00:01.000Z',
      level: 'info',
      step_id: null,
      target_id: null,
      target_name: null,
      message,
      metadata: null,
    },
  },
});

const setup = (watching: Record<string, string[]>, push = new Push()) => {
  const registry = new Registry(new Map(Object.entries(watching).map(([id, ids]) => [id, ids.map(connection)])));
  const clock = new FakeClock();
  const warnings: string[] = [];
  const publisher = viewerPublisher(
    { registry, push, clock, wait: realWait, warn: (message) => warnings.push(message) },
    { cacheMs: 1_000, timeoutMs: 200 },
  );
  return { registry, push, clock, warnings, publisher };
};

describe('eventsMessages', () => {
  it('splits at 100 events a message, in order', () => {
    // Prepare
    const events = Array.from({ length: 250 }, (_, i) => viewerEvent(log(i + 1)));
    // Act
    const messages = eventsMessages('d1', events);
    // Assess
    expect(messages.map((m) => (m.type === 'events' ? m.events.length : 0))).toEqual([100, 100, 50]);
    expect(messages.flatMap((m) => (m.type === 'events' ? m.events.map((e) => e.id) : []))).toEqual(
      events.map((e) => e.id),
    );
  });

  it('splits at about 100 KB a message, and never leaves an event out', () => {
    // Prepare: 30 events of ~10 KB each
    const events = Array.from({ length: 30 }, (_, i) => viewerEvent(log(i + 1, 'x'.repeat(10_000))));
    // Act
    const messages = eventsMessages('d1', events);
    // Assess
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) expect(JSON.stringify(message).length).toBeLessThan(110_000);
    expect(messages.flatMap((m) => (m.type === 'events' ? m.events : []))).toHaveLength(30);
  });

  it('sends each event as the SSE log stream does: its seq, event and data', () => {
    // Act
    const [message] = eventsMessages('d1', [viewerEvent(log(7))]);
    // Assess
    expect(message).toEqual({
      type: 'events',
      deployment_id: 'd1',
      events: [
        {
          id: 7,
          event: 'log',
          data: expect.objectContaining({ type: 'log', log: expect.objectContaining({ message: 'line 7' }) }),
        },
      ],
    });
  });
});

describe('viewerPublisher', () => {
  it('sends one events message per subscribed connection per commit', async () => {
    // Prepare
    const { publisher, push } = setup({ d1: ['c1', 'c2'], d2: ['c3'] });
    // Act
    await publisher.publish('d1', [log(1), log(2)]);
    // Assess
    expect(push.sent.map((s) => s.connectionId).sort()).toEqual(['c1', 'c2']);
    for (const { message } of push.sent)
      expect(message).toMatchObject({ type: 'events', deployment_id: 'd1', events: [{ id: 1 }, { id: 2 }] });
  });

  it('queries the subscribers once a second per deployment, also when nobody watches', async () => {
    // Prepare
    const { publisher, registry, clock } = setup({});
    // Act
    for (let i = 1; i <= 10; i += 1) await publisher.publish('d1', [log(i)]);
    const within = registry.queries;
    clock.advance(1_001);
    await publisher.publish('d1', [log(11)]);
    // Assess
    expect(within).toBe(1);
    expect(registry.queries).toBe(2);
  });

  it('costs one query per commit for 50 viewers, not 50', async () => {
    // Prepare
    const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const { publisher, registry, push } = setup({ d1: ids });
    // Act
    await publisher.publish('d1', [log(1)]);
    // Assess
    expect(registry.queries).toBe(1);
    expect(new Set(push.sent.map((s) => s.connectionId)).size).toBe(50);
  });

  it('batches the callers of one group-commit round into one message per connection, in seq order', async () => {
    // Prepare
    const { publisher, push } = setup({ d1: ['c1'] });
    // Act: two callers resolved in the same turn
    await Promise.all([publisher.publish('d1', [log(3)]), publisher.publish('d1', [log(1), log(2)])]);
    // Assess
    expect(push.sent).toHaveLength(1);
    expect(push.sent[0]!.message).toMatchObject({ events: [{ id: 1 }, { id: 2 }, { id: 3 }] });
  });

  it('forgets a gone connection, in the registry and in the cached list', async () => {
    // Prepare
    const { publisher, registry, push } = setup({ d1: ['c1', 'c2'] }, new Push(new Set(['c1'])));
    // Act
    await publisher.publish('d1', [log(1)]);
    await publisher.publish('d1', [log(2)]);
    // Assess
    expect(registry.disconnected).toEqual(['c1']);
    expect(push.sent.map((s) => s.connectionId)).toEqual(['c2', 'c2']);
  });

  it('never fails the write: a registry failure is logged, and not cached', async () => {
    // Prepare
    const { publisher, registry, push, warnings } = setup({ d1: ['c1'] });
    registry.fail = true;
    // Act
    await expect(publisher.publish('d1', [log(1)])).resolves.toBeUndefined();
    registry.fail = false;
    await publisher.publish('d1', [log(2)]);
    // Assess
    expect(warnings).toEqual(['viewer push failed']);
    expect(push.sent.map((s) => s.message)).toMatchObject([{ events: [{ id: 2 }] }]);
  });

  it('gives up after the timeout when a send hangs', async () => {
    // Prepare
    const { publisher, warnings } = setup({ d1: ['c1'] }, new Push(new Set(), true));
    const started = Date.now();
    // Act
    await publisher.publish('d1', [log(1)]);
    // Assess
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(warnings).toEqual(['viewer push: gave up waiting']);
  });
});

describe('publishingEvents', () => {
  it('pushes what append and appendOnce stored, after they stored it, and answers it', async () => {
    // Prepare
    let seq = 0;
    const published: number[][] = [];
    const stored = (count: number) => Array.from({ length: count }, () => log((seq += 1)));
    const store = publishingEvents(
      {
        append: async (_id, events) => stored(events.length),
        appendOnce: async (_id, groups) => stored(groups.reduce((n, g) => n + g.events.length, 0)),
        after: async () => [],
        page: async () => [],
        last: async () => undefined,
        keyedSeq: async (_id, key) => (key === 'k' ? 7 : undefined),
      },
      { publish: async (_id, events) => void published.push(events.map((e) => e.seq)) },
    );
    const event = log(0);
    // Act
    const first = await store.append('d1', [event, event]);
    const second = await store.appendOnce('d1', [{ key: 'k', events: [event] }]);
    // Assess
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    expect(second.map((e) => e.seq)).toEqual([3]);
    expect(published).toEqual([[1, 2], [3]]);
    expect(await store.keyedSeq('d1', 'k')).toBe(7);
  });
});
