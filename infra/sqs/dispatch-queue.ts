// DispatchQueue adapter: a wake-up message on the dispatch SQS queue; its consumer (the dispatcher) looks at the
// pending requests itself, so duplicate or reordered messages are harmless.
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DispatchQueue } from '../../domain/deployments/ports.js';

export class SqsDispatchQueue implements DispatchQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async wake(reason: string): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify({ type: 'dispatch', reason }) }),
    );
  }
}
