// DispatchQueue adapter: a wake-up message on the dispatch SQS queue; its consumer (the dispatcher) looks at the
// pending requests itself, so duplicate or reordered messages are harmless.
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import type { DispatchQueue } from '../../domain/deployments/ports.js';

/** A message of the dispatch queue: a wake-up and why (`type: 'dispatch'` beside it is read past). */
export const DispatchMessage = v.object({ reason: v.string() });
export type DispatchMessage = v.InferOutput<typeof DispatchMessage>;

export class SqsDispatchQueue implements DispatchQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async wake(reason: string): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify({ type: 'dispatch', reason } satisfies DispatchMessage & { type: 'dispatch' }),
      }),
    );
  }
}
