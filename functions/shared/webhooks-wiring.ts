// The composition root, outgoing webhooks part: the subscription and delivery repositories, the webhook queue, the
// guarded sender, the signer (the emitter is in webhook-events-wiring.ts).
import { randomUUID } from 'node:crypto';
import type { DeploymentWebhooks } from '../../domain/deployments/outbox.js';
import type { DeliverDeps } from '../../domain/webhooks/deliver.js';
import type { WebhooksDeps } from '../../domain/webhooks/subscriptions.js';
import { parseAllowedHosts } from '../../infra/net/address-policy.js';
import { DynamoDeploymentRepository } from '../../infra/dynamodb/deployment-repository.js';
import { DynamoDeliveryRepository } from '../../infra/dynamodb/webhook-repository.js';
import { DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import { standardWebhookSigner, webhookAllowedHosts, webhookSender } from '../../infra/webhooks/webhook-sender.js';
import { secretCipher } from './identity-wiring.js';
import { once } from './once.js';
import { bestEffortWebhookEvents, webhookEvents, webhookQueue, webhookSubscriptions } from './webhook-events-wiring.js';
import { infra } from './wiring.js';

const subscriptions = webhookSubscriptions;
const queue = webhookQueue;
const deliveries = once(() => new DynamoDeliveryRepository(infra().db, infra().config.TABLE_NAME));

/** WEBHOOK_ALLOWED_HOSTS, and loopback where WEBHOOK_ALLOW_LOOPBACK says so (by default only on the local stage). */
const allowedHosts = once(() => {
  const cfg = infra().config;
  const loopback = (cfg.WEBHOOK_ALLOW_LOOPBACK ?? (cfg.STAGE === 'local' ? 'true' : 'false')) === 'true';
  return webhookAllowedHosts(parseAllowedHosts(cfg.WEBHOOK_ALLOWED_HOSTS), loopback);
});
const sender = once(() => webhookSender(allowedHosts()));
const baseUrl = () => infra().config.PUBLIC_BASE_URL.replace(/\/+$/, '');

/** What the admin use cases and the delivery both send with: the stores, the queue, the sender and the signing. */
const sending = () => ({
  subscriptions: subscriptions(),
  deliveries: deliveries(),
  queue: queue(),
  sender: sender(),
  signer: standardWebhookSigner,
  cipher: secretCipher(),
  clock: infra().clock,
});

export const webhooksDeps = once((): WebhooksDeps => ({ ...sending(), uuid: randomUUID }));

export const deliverDeps = once((): DeliverDeps => ({
  ...sending(),
  schedule: { scale: infra().config.WEBHOOK_RETRY_SCALE, random: Math.random },
  disableAfter: infra().config.WEBHOOK_DISABLE_AFTER,
  baseUrl: baseUrl(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  targets: new DynamoTargetRepository(infra().db, infra().config.TABLE_NAME),
}));

/** What the deployments context needs: the emitter and where a deployment is read when someone listens. */
export const deploymentWebhooks = once((): DeploymentWebhooks => ({
  emitter: webhookEvents(),
  deployments: new DynamoDeploymentRepository(infra().db, infra().config.TABLE_NAME),
}));

export const bestEffortDeploymentWebhooks = once((): DeploymentWebhooks => ({
  ...deploymentWebhooks(),
  emitter: bestEffortWebhookEvents(),
}));
