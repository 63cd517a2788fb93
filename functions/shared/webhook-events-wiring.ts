// The composition root, webhook events part: the emitter every context with events uses, kept apart from the rest
// of the webhooks wiring (no cipher, no sender), so the light functions that emit (the agents' socket) stay light.
// Without WEBHOOK_QUEUE_URL the emitter is silent (nothing is read, nothing sent).
import { silentEmitter, webhookEmitter, type WebhookEmitter } from '../../domain/webhooks/notify.js';
import { DynamoSubscriptionRepository } from '../../infra/dynamodb/webhook-repository.js';
import { SqsWebhookQueue } from '../../infra/sqs/webhook-queue.js';
import { logger } from './logger.js';
import { once } from './once.js';
import { infra, sqs } from './wiring.js';

export const webhookSubscriptions = once(() => new DynamoSubscriptionRepository(infra().db, infra().config.TABLE_NAME));
export const webhookQueue = once(() => new SqsWebhookQueue(sqs(), infra().config.WEBHOOK_QUEUE_URL ?? ''));

/** The emitter of this container (its cache of who listens lives as long as the container). */
export const webhookEvents = once((): WebhookEmitter => {
  const cfg = infra().config;
  if (cfg.WEBHOOK_QUEUE_URL === undefined) return silentEmitter;
  return webhookEmitter({
    subscriptions: webhookSubscriptions(),
    queue: webhookQueue(),
    clock: infra().clock,
    cacheMs: cfg.WEBHOOK_CACHE_SECONDS * 1000,
  });
});

/**
 * For paths that answer a request after their write (a create that queued, the dispatcher, the agent socket): a
 * failed emission is logged and does not fail what already happened.
 */
export const bestEffortWebhookEvents = once((): WebhookEmitter => {
  const emitter = webhookEvents();
  return {
    listens: (type, tenantId) => emitter.listens(type, tenantId).catch(() => false),
    emit: (emission) =>
      emitter.emit(emission).catch((error: unknown) => {
        logger.error('a webhook event could not be emitted', { type: emission.type, error });
      }),
  };
});
