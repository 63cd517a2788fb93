// EngineQueue adapter: a message on the orchestrator SQS queue per wake-up, delayed when asked (SQS allows up to
// 900 s). The consumer advances the deployment named in it.
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import type { EngineQueue, EngineWake } from '../../domain/deployments/engine.js';

/** A message of the orchestrator queue: the deployment to advance, and whether it is a periodic check. */
export const EngineMessage = v.object({
  deployment_id: v.string(),
  check: v.optional(v.boolean(), false),
  /** The command whose completion this wake-up reports (EngineWake.commandId). */
  command_id: v.optional(v.string()),
});
export type EngineMessage = v.InferOutput<typeof EngineMessage>;

export class SqsEngineQueue implements EngineQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async wake(deploymentId: string, options: EngineWake = {}): Promise<void> {
    const message: EngineMessage = {
      deployment_id: deploymentId,
      check: options.check === true,
      ...(options.commandId === undefined ? {} : { command_id: options.commandId }),
    };
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
