// AnalysisQueue adapter: one message per request to analyse on the analysis SQS queue; its depth for the status.
import { GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import type { AnalysisQueue } from '../../domain/analysis/model.js';

/** A message of the analysis queue: the request to analyse (its consumer parses it with this schema). */
export const AnalysisMessage = v.object({ request_id: v.string() });
export type AnalysisMessage = v.InferOutput<typeof AnalysisMessage>;

export class SqsAnalysisQueue implements AnalysisQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(requestId: string): Promise<void> {
    const message: AnalysisMessage = { request_id: requestId };
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }

  async depth(): Promise<number> {
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes?.['ApproximateNumberOfMessages'] ?? 0) +
      Number(Attributes?.['ApproximateNumberOfMessagesNotVisible'] ?? 0)
    );
  }
}
