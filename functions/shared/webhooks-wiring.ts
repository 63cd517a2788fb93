// The composition root, outgoing webhooks part: the subscription and delivery repositories, the webhook queue, the
// guarded sender, the signer, and the emitter every context that has events uses. Without WEBHOOK_QUEUE_URL the
// emitter is silent (nothing is read, nothing sent).
import { randomUUID } from 'node:crypto';
import type { DeploymentWebhooks } from '../../domain/deployments/outbox.js';
import type { DeliverDeps } from '../../domain/webhooks/deliver.js';
import { silentEmitter, webhookEmitter, type WebhookEmitter } from '../../domain/webhooks/notify.js';
import type { WebhooksDeps } from '../../domain/webhooks/subscriptions.js';
import { parseAllowedHosts } from '../../infra/net/address-policy.js';
import { DynamoDeploymentRepository } from '../../infra/dynamodb/deployment-repository.js';
import { DynamoDeliveryRepository, DynamoSubscriptionRepository } from '../../infra/dynamodb/webhook-repository.js';
import { SqsWebhookQueue } from '../../infra/sqs/webhook-queue.js';
import { standardWebhookSigner, webhookAllowedHosts, webhookSender } from '../../infra/webhooks/webhook-sender.js';
import { secretCipher } from './identity-wiring.js';
import { logger } from './logger.js';
import { once } from './once.js';
import { infra, sqs } from './wiring.js';

const subscriptions = once(() => new DynamoSubscriptionRepository(infra().db, infra().config.TABLE_NAME));
const deliveries = once(() => new DynamoDeliveryRepository(infra().db, infra().config.TABLE_NAME));
const queue = once(() => new SqsWebhookQueue(sqs(), infra().config.WEBHOOK_QUEUE_URL ?? ''));

/** WEBHOOK_ALLOWED_HOSTS, and loopback where WEBHOOK_ALLOW_LOOPBACK says so (by default only on the local stage). */
const allowedHosts = once(() => {
  const cfg = infra().config;
  const loopback = (cfg.WEBHOOK_ALLOW_LOOPBACK ?? (cfg.STAGE === 'local' ? 'true' : 'false')) === 'true';
  return webhookAllowedHosts(parseAllowedHosts(cfg.WEBHOOK_ALLOWED_HOSTS), loopback);
});
const sender = once(() => webhookSender(allowedHosts()));
const baseUrl = () => infra().config.PUBLIC_BASE_URL.replace(/\/+$/, '');

export const webhooksDeps = once((): WebhooksDeps => ({
  subscriptions: subscriptions(),
  deliveries: deliveries(),
  queue: queue(),
  sender: sender(),
  signer: standardWebhookSigner,
  cipher: secretCipher(),
  clock: infra().clock,
  uuid: randomUUID,
}));

export const deliverDeps = once((): DeliverDeps => ({
  subscriptions: subscriptions(),
  deliveries: deliveries(),
  queue: queue(),
  sender: sender(),
  signer: standardWebhookSigner,
  cipher: secretCipher(),
  clock: infra().clock,
  schedule: { scale: infra().config.WEBHOOK_RETRY_SCALE, random: Math.random },
  disableAfter: infra().config.WEBHOOK_DISABLE_AFTER,
  baseUrl: baseUrl(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
}));

/** The emitter of this container (its cache of who listens lives as long as the container). */
export const webhookEvents = once((): WebhookEmitter => {
  const cfg = infra().config;
  if (cfg.WEBHOOK_QUEUE_URL === undefined) return silentEmitter;
  return webhookEmitter({
    subscriptions: subscriptions(),
    queue: queue(),
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

/** What the deployments context needs: the emitter and where a deployment is read when someone listens. */
export const deploymentWebhooks = once((): DeploymentWebhooks => ({
  emitter: webhookEvents(),
  deployments: new DynamoDeploymentRepository(infra().db, infra().config.TABLE_NAME),
}));

export const bestEffortDeploymentWebhooks = once((): DeploymentWebhooks => ({
  ...deploymentWebhooks(),
  emitter: bestEffortWebhookEvents(),
}));
