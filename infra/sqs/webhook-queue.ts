// WebhookQueue adapter: the webhook SQS queue carries events to fan out and delivery attempts (delayed up to 900 s;
// a longer wait hops, see domain/webhooks/deliver.ts).
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { WebhookMessage, WebhookQueue } from '../../domain/webhooks/ports.js';

export class SqsWebhookQueue implements WebhookQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: WebhookMessage, delaySeconds = 0): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        ...(delaySeconds > 0 ? { DelaySeconds: Math.min(900, Math.floor(delaySeconds)) } : {}),
      }),
    );
  }
}
