import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { handleMessage, type DeliverDeps } from '../../../../domain/webhooks/deliver.js';
import { webhookEmitter } from '../../../../domain/webhooks/notify.js';
import type { WebhookMessage } from '../../../../domain/webhooks/ports.js';
import { MAX_ATTEMPTS } from '../../../../domain/webhooks/schedule.js';
import { secretContext } from '../../../../domain/webhooks/subscriptions.js';
import type { Subscription, WebhookEvent } from '../../../../domain/webhooks/types.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { standardWebhookSigner } from '../../../../infra/webhooks/webhook-sender.js';
import { FakeClock } from '../../../fakes/clock.js';
import {
  answer,
  FakeDeliveries,
  FakeSubscriptions,
  FakeWebhookQueue,
  ScriptedSender,
} from '../../../fakes/webhooks.js';

const cipher = new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 3) } });
const SECRET = standardWebhookSigner.newSecret();

const setup = (answers: (call: number) => ReturnType<typeof answer>, disableAfter = 5) => {
  const clock = new FakeClock(new Date()); // signatures carry the time: receivers refuse one 5 minutes off
  const subscriptions = new FakeSubscriptions();
  const sub: Subscription = {
    id: 'sub-1',
    tenantId: 't1',
    url: 'https://receiver.example.com/hook',
    description: null,
    eventTypes: ['deployment.succeeded'],
    format: 'standard',
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    consecutiveFailures: 0,
    sealedSecret: cipher.encrypt(SECRET, secretContext('sub-1')),
    createdBy: 'u1',
    createdAt: clock.now().toISOString(),
    updatedAt: clock.now().toISOString(),
    revision: 1,
  };
  void subscriptions.create(sub);
  const queue = new FakeWebhookQueue();
  const sender = new ScriptedSender(answers);
  const deps: DeliverDeps = {
    subscriptions,
    deliveries: new FakeDeliveries(),
    queue,
    sender,
    signer: standardWebhookSigner,
    cipher,
    clock,
    schedule: { scale: 1, random: () => 0.5 },
    disableAfter,
    baseUrl: 'https://deploy.example.com',
    sleep: async () => undefined,
  };
  /** Runs every queued message, moving the clock to each one's time, until the queue is empty. */
  const drain = async () => {
    for (let round = 0; round < 100; round += 1) {
      const batch = queue.take();
      if (batch.length === 0) return;
      for (const { message } of batch) {
        if (message.kind === 'attempt') {
          const wait = Date.parse(message.not_before) - clock.now().getTime();
          if (wait > 0) clock.advance(wait);
        }
        await handleMessage(deps, message);
      }
    }
  };
  return { deps, clock, subscriptions, queue, sender, drain };
};

const event = (id: string): WebhookEvent => ({
  id: `deployment.succeeded:${id}`,
  type: 'deployment.succeeded',
  tenantId: 't1',
  timestamp: '2026-01-01T00:00:00.000Z',
  data: { id, state: 'success' },
});
const fan = (e: WebhookEvent): WebhookMessage => ({ kind: 'event', event: e });

describe('webhook deliveries', () => {
  it('signs each attempt per Standard Webhooks and retries a failure with the same webhook-id', async () => {
    // Prepare
    const { deps, drain, sender } = setup((call) => (call === 1 ? answer(500, 'down') : answer(204)));

    // Act
    await handleMessage(deps, fan(event('d1')));
    await drain();

    // Assess
    expect(sender.calls).toHaveLength(2);
    const [first, second] = sender.calls;
    expect(first?.headers['webhook-id']).toBe(second?.headers['webhook-id']);
    const verified = new Webhook(SECRET).verify(second!.body, second!.headers as Record<string, string>);
    expect(verified).toMatchObject({ type: 'deployment.succeeded', version: 1, data: { id: 'd1' } });
    const [delivery] = await deps.deliveries.listBySubscription('sub-1');
    expect(delivery).toMatchObject({ state: 'delivered', attempt: 2, statusCode: 204 });
    expect(delivery?.attempts.map((a) => a.statusCode)).toEqual([500, 204]);
  });

  it('makes one delivery of an event emitted twice (a retried pass, a redelivered message)', async () => {
    const { deps, drain, sender } = setup(() => answer(200));
    await handleMessage(deps, fan(event('d2')));
    await handleMessage(deps, fan(event('d2')));
    await drain();
    await handleMessage(deps, fan(event('d2')));
    await drain();
    expect(sender.calls).toHaveLength(1);
  });

  it('ignores a repeated attempt message once the attempt was made', async () => {
    const { deps, queue, sender } = setup(() => answer(200));
    await handleMessage(deps, fan(event('d3')));
    const [attempt] = queue.take();
    await handleMessage(deps, attempt!.message);
    await handleMessage(deps, attempt!.message);
    expect(sender.calls).toHaveLength(1);
  });

  it('gives up after every attempt of the schedule, and disables the subscription after 5 such deliveries', async () => {
    // Prepare
    const { deps, drain, sender, subscriptions } = setup(() => answer(503, '\u001b[31mnope\u0000'));

    // Act
    for (const id of ['a', 'b', 'c', 'd']) await handleMessage(deps, fan(event(id)));
    await drain();
    const afterFour = subscriptions.items.get('sub-1');
    await handleMessage(deps, fan(event('e')));
    await drain();

    // Assess
    expect(sender.calls).toHaveLength(5 * MAX_ATTEMPTS);
    expect(afterFour).toMatchObject({ enabled: true, consecutiveFailures: 4 });
    expect(subscriptions.items.get('sub-1')).toMatchObject({
      enabled: false,
      disabledReason: expect.stringMatching(/^5 deliveries in a row failed after every attempt/),
    });
    const [last] = await deps.deliveries.listBySubscription('sub-1');
    expect(last).toMatchObject({ state: 'failed', attempt: MAX_ATTEMPTS, responseExcerpt: '[31mnope' });
  });

  it('hops a wait longer than SQS can delay', async () => {
    const { deps, queue, clock } = setup(() => answer(500));
    await handleMessage(deps, fan(event('h')));
    // attempts 1..5 fail; the wait after the fifth is 2 h
    for (let i = 0; i < 5; i += 1) {
      const [next] = queue.take();
      const wait = Date.parse((next!.message as { not_before: string }).not_before) - clock.now().getTime();
      if (wait > 0) clock.advance(Math.min(wait, 900_000));
      await handleMessage(deps, next!.message);
    }
    const [after] = queue.take();
    expect(after?.delaySeconds).toBe(900);
    await handleMessage(deps, after!.message); // still 1 h 45 min early: sent on again
    const [hop] = queue.take();
    expect(hop?.delaySeconds).toBe(900);
    expect(hop?.message).toEqual(after?.message);
  });

  it('disables on 410 Gone at once', async () => {
    const { deps, drain, subscriptions, sender } = setup(() => answer(410));
    await handleMessage(deps, fan(event('g')));
    await drain();
    expect(sender.calls).toHaveLength(1);
    expect(subscriptions.items.get('sub-1')).toMatchObject({
      enabled: false,
      disabledReason: expect.stringMatching(/410/),
    });
  });
});

describe('the emitter', () => {
  it('costs no read and sends nothing for a tenant without subscriptions, within the cache time', async () => {
    // Prepare
    const subscriptions = new FakeSubscriptions();
    const queue = new FakeWebhookQueue();
    const clock = new FakeClock();
    const emitter = webhookEmitter({ subscriptions, queue, clock, cacheMs: 5000 });
    let built = 0;
    const emission = {
      type: 'deployment.created' as const,
      subject: ['d1'],
      tenantId: 't1',
      timestamp: 'now',
      data: () => (built += 1),
    };

    // Act
    for (let i = 0; i < 10; i += 1) await emitter.emit(emission);

    // Assess
    expect(subscriptions.reads).toBe(2); // the tenant's and the global list, once
    expect(queue.sent).toHaveLength(0);
    expect(built).toBe(0);
  });
});

describe('target.offline', () => {
  it('is emitted by the delayed check only when the target did not come back', async () => {
    // Prepare
    const { deps, subscriptions, clock, drain, sender } = setup(() => answer(200));
    const sub = subscriptions.items.get('sub-1')!;
    subscriptions.items.set('sub-1', { ...sub, eventTypes: ['target.offline'] });
    const target = {
      ...{ id: 'tg1', shortId: 'tg', name: 'web-1', hostname: 'web-1', os: 'linux', arch: 'x64', agentVersion: '1' },
      ...{ tags: [], tenantId: 't1', environmentId: null, createdAt: clock.now().toISOString() },
      ...{ connectionId: null, lastHeartbeatAt: clock.now().toISOString() },
    };
    const targets = { get: async () => target as never };
    const check = { kind: 'target_check' as const, target_id: 'tg1', connection_id: 'c1' };

    // Act: within a minute of its last heartbeat it is still online; after, offline
    const early = await handleMessage({ ...deps, targets }, check);
    clock.advance(75_000);
    const late = await handleMessage({ ...deps, targets }, check);
    await handleMessage({ ...deps, targets }, check);

    // Assess
    expect([early, late]).toEqual(['skipped', 'fanned_out']);
    await drain();
    expect(sender.calls).toHaveLength(1); // the repeated check made no second delivery
    const deliveries = await deps.deliveries.listBySubscription('sub-1');
    expect(deliveries).toMatchObject([{ eventId: 'target.offline:tg1:c1', eventType: 'target.offline' }]);
  });
});
