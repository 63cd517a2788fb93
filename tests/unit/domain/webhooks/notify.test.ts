// The emitter's cache rule (issue 30, "a subscription misses the first events"): a subscription answered before a
// piece of work was created hears that work's events in every container, while an event nobody listens to costs a
// cached look for work older than the look.
import { describe, expect, it } from 'vitest';
import {
  lookServes,
  SUBSCRIPTION_INDEX_LAG_MS,
  webhookEmitter,
  type Emission,
} from '../../../../domain/webhooks/notify.js';
import type { Subscription } from '../../../../domain/webhooks/types.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeSubscriptions, FakeWebhookQueue } from '../../../fakes/webhooks.js';

const CACHE_MS = 5000;

const subscription = (at: string, overrides: Partial<Subscription> = {}): Subscription => ({
  id: 'sub-1',
  tenantId: 't1',
  url: 'https://receiver.example.com/hook',
  description: null,
  eventTypes: ['deployment.created'],
  format: 'standard',
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  consecutiveFailures: 0,
  sealedSecret: 'sealed',
  createdBy: 'u1',
  createdAt: at,
  updatedAt: at,
  revision: 1,
  ...overrides,
});

const sentData = (queue: FakeWebhookQueue) =>
  queue.sent.map(({ message }) => (message.kind === 'event' ? message.event.data : undefined));

/** Two containers (each its own emitter and cache) over one subscription store. */
const world = () => {
  const clock = new FakeClock(new Date('2026-11-27T12:00:00.000Z'));
  const subscriptions = new FakeSubscriptions();
  const queue = new FakeWebhookQueue();
  const container = () => webhookEmitter({ subscriptions, queue, clock, cacheMs: CACHE_MS });
  const event = (subject: string, since: Date | undefined): Emission => ({
    type: 'deployment.created',
    subject: [subject],
    tenantId: 't1',
    timestamp: clock.now().toISOString(),
    ...(since === undefined ? {} : { since: since.toISOString() }),
    data: () => ({ id: subject }),
  });
  return { clock, subscriptions, queue, container, event };
};

describe('lookServes', () => {
  const look = (readAt: number, types: string[] = []) => ({ readAt, types: new Set(types) });

  it.each([
    ['a "no" for work created before the look (and the lag)', look(10_000), 10_000 - SUBSCRIPTION_INDEX_LAG_MS, true],
    ['a "no" for work created after the look', look(10_000), 10_500, false],
    ['a "no" for work created within the lag before the look', look(10_000), 9_500, false],
    ['a "no" for an event that names no work (the cache time alone)', look(10_000), undefined, true],
    ['a "yes" for work created after the look (the consumer reads again)', look(10_000, ['x']), 10_500, true],
  ])('%s: %s', (_, cached, since, serves) => {
    expect(lookServes(cached, 'x', 11_000, CACHE_MS, since)).toBe(serves);
  });

  it('never serves past the cache time', () => {
    expect(lookServes(look(10_000, ['x']), 'x', 10_000 + CACHE_MS, CACHE_MS, 0)).toBe(false);
    expect(lookServes(look(10_000), 'x', 10_000 + CACHE_MS, CACHE_MS, undefined)).toBe(false);
  });
});

describe('webhookEmitter: a subscription hears the work created after its answer', () => {
  it('delivers the first event of work created right after a subscription another container wrote', async () => {
    // Prepare: container A looked (nobody listens) and cached that; container B answers POST /webhooks
    const { clock, subscriptions, queue, container, event } = world();
    const a = container();
    await a.emit(event('old', new Date(clock.now().getTime() - 60_000)));
    clock.advance(200);
    await subscriptions.create(subscription(clock.now().toISOString()));
    clock.advance(50);
    const createdAt = clock.now(); // the deployment is created after the answer
    clock.advance(30);

    // Act
    await a.emit(event('new', createdAt));

    // Assess
    expect(sentData(queue)).toEqual([{ id: 'new' }]);
  });

  it('costs no read for events of work older than the look, within the cache time (the idle cost)', async () => {
    // Prepare
    const { clock, subscriptions, queue, container, event } = world();
    const a = container();
    const longAgo = new Date(clock.now().getTime() - 60_000);

    // Act
    for (let i = 0; i < 10; i += 1) {
      await a.emit(event(`old-${i}`, longAgo));
      clock.advance(100);
    }

    // Assess: the tenant's and the global list, once
    expect(subscriptions.reads).toBe(2);
    expect(queue.sent).toHaveLength(0);
  });

  it('costs new work one look per scope per event in its first second, then one more, then none', async () => {
    // Prepare
    const { clock, subscriptions, container, event } = world();
    const a = container();
    const createdAt = clock.now();

    // Act: created and started at once, a later event, then the rest within the cache time
    clock.advance(20);
    await a.emit(event('d', createdAt));
    await a.emit(event('d', createdAt));
    clock.advance(SUBSCRIPTION_INDEX_LAG_MS);
    await a.emit(event('d', createdAt));
    const afterTheLag = subscriptions.reads;
    for (let i = 0; i < 5; i += 1) {
      clock.advance(100);
      await a.emit(event('d', createdAt));
    }

    // Assess: 3 looks x 2 scopes (the tenant's and the global list), and nothing after
    expect(afterTheLag).toBe(6);
    expect(subscriptions.reads).toBe(6);
  });

  it('keeps trusting a cached "yes" (a stale yes costs one message; the consumer reads the subscriptions again)', async () => {
    // Prepare
    const { clock, subscriptions, queue, container, event } = world();
    await subscriptions.create(subscription(clock.now().toISOString(), { tenantId: null })); // global: looked first
    const a = container();
    await a.emit(event('first', undefined));
    const reads = subscriptions.reads;

    // Act
    clock.advance(10);
    await a.emit(event('second', clock.now()));

    // Assess
    expect(subscriptions.reads).toBe(reads);
    expect(queue.sent).toHaveLength(2);
  });

  it('hears a subscription enabled (or widened) before the work, like a created one', async () => {
    // Prepare: a disabled subscription, cached as nobody listening
    const { clock, subscriptions, queue, container, event } = world();
    await subscriptions.create(subscription(clock.now().toISOString(), { enabled: false }));
    const a = container();
    await a.emit(event('before', undefined));
    clock.advance(100);
    const current = subscriptions.items.get('sub-1')!;
    await subscriptions.update(current, { enabled: true }, clock.now().toISOString());
    clock.advance(10);
    const createdAt = clock.now();

    // Act
    await a.emit(event('after', createdAt));

    // Assess
    expect(sentData(queue)).toEqual([{ id: 'after' }]);
  });
});
