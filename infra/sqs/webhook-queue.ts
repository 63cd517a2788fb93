// WebhookQueue adapter: the webhook SQS queue carries events to fan out and delivery attempts (delayed up to 900 s;
// a longer wait hops, see domain/webhooks/deliver.ts).
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import type { EventType } from '../../domain/webhooks/events.js';
import type { WebhookMessage as Message, WebhookQueue } from '../../domain/webhooks/ports.js';

/** A message of the webhook queue as its consumer parses it: an event to fan out, an attempt, a target check. */
export const WebhookMessage: v.GenericSchema<unknown, Message> = v.variant('kind', [
  v.object({
    kind: v.literal('event'),
    event: v.pipe(
      v.looseObject({
        id: v.string(),
        type: v.custom<EventType>((type) => typeof type === 'string'),
        tenantId: v.nullable(v.string()),
        timestamp: v.string(),
      }),
      // `data` is any JSON (absent when the emitter had none), kept as it came
      v.transform((event) => event as typeof event & { readonly data: unknown }),
    ),
  }),
  v.object({ kind: v.literal('attempt'), delivery_id: v.string(), attempt: v.number(), not_before: v.string() }),
  v.object({ kind: v.literal('target_check'), target_id: v.string(), connection_id: v.string() }),
]);

export class SqsWebhookQueue implements WebhookQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: Message, delaySeconds = 0): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        ...(delaySeconds > 0 ? { DelaySeconds: Math.min(900, Math.floor(delaySeconds)) } : {}),
      }),
    );
  }
}
