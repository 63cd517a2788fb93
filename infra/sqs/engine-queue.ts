// EngineQueue adapter: a message on the orchestrator SQS queue per wake-up, delayed when asked (SQS allows up to
// 900 s). The consumer advances the deployment named in it.
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { EngineQueue } from '../../domain/deployments/engine.js';

export interface EngineMessage {
  readonly deployment_id: string;
  readonly check: boolean;
}

export class SqsEngineQueue implements EngineQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async wake(
    deploymentId: string,
    options: { readonly delaySeconds?: number; readonly check?: boolean } = {},
  ): Promise<void> {
    const message: EngineMessage = { deployment_id: deploymentId, check: options.check === true };
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(message),
        ...(options.delaySeconds === undefined
          ? {}
          : { DelaySeconds: Math.min(900, Math.max(0, Math.round(options.delaySeconds))) }),
      }),
    );
  }
}
