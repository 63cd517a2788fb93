// queue -> handleMessage (domain/webhooks/deliver.ts) -> SubscriptionRepository, DeliveryRepository, WebhookSender
// Each message is an event to fan out or one delivery attempt. The records of a batch are handled one after the
// other, so events emitted in order (created, then started) are fanned out and first attempted in that order. A
// failure fails that message only (SQS retries it; every step is conditional, so a retry repeats nothing); an
// attempt another consumer still holds comes back after the visibility timeout.
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { handleMessage, type DeliverDeps } from '../../domain/webhooks/deliver.js';
import type { WebhookMessage } from '../../domain/webhooks/ports.js';
import { logger } from '../shared/logger.js';
import { deliverDeps } from '../shared/webhooks-wiring.js';

export const makeHandler =
  (deps: () => DeliverDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: string[] = [];
    for (const record of event.Records) {
      let message: WebhookMessage;
      try {
        message = JSON.parse(record.body) as WebhookMessage;
      } catch {
        logger.error('webhook message is not JSON; dropped', { messageId: record.messageId });
        continue;
      }
      try {
        const outcome = await handleMessage(deps(), message);
        if (outcome === 'busy') failures.push(record.messageId);
      } catch (error) {
        logger.error('a webhook message failed; retried', { kind: message.kind, error });
        failures.push(record.messageId);
      }
    }
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = makeHandler(deliverDeps);
