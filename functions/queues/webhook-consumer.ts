// queue -> handleMessage (domain/webhooks/deliver.ts) -> SubscriptionRepository, DeliveryRepository, WebhookSender
// Each message is an event to fan out or one delivery attempt. The records of a batch are handled one after the
// other, so events emitted in order (created, then started) are fanned out and first attempted in that order. A
// failure fails that message only (SQS retries it; every step is conditional, so a retry repeats nothing); an
// attempt another consumer still holds comes back after the visibility timeout. A message that does not parse fails
// (functions/queues/batch.ts).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { handleMessage, type DeliverDeps } from '../../domain/webhooks/deliver.js';
import { WebhookMessage } from '../../infra/sqs/webhook-queue.js';
import { logger } from '../shared/logger.js';
import { deliverDeps } from '../shared/webhooks-wiring.js';
import { RetryLater, sqsBatch } from './batch.js';

export const makeHandler = (deps: () => DeliverDeps) =>
  sqsBatch(
    WebhookMessage,
    async (message) => {
      let outcome: Awaited<ReturnType<typeof handleMessage>>;
      try {
        outcome = await handleMessage(deps(), message);
      } catch (error) {
        logger.error('a webhook message failed; retried', { kind: message.kind, error });
        throw error;
      }
      if (outcome === 'busy') throw new RetryLater(`a ${message.kind} message is held elsewhere`);
    },
    { inOrder: true },
  );

export const handler = makeHandler(deliverDeps);
