// queue -> advance (domain/deployments/engine.ts) -> DeploymentRepository, CommandRepository, Orchestration
// Each message names a deployment to advance; several for one deployment in a batch are advanced once (a check
// among them keeps the periodic chain going). A failure fails that deployment's messages only, and SQS retries them.
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { advance, type EngineDeps } from '../../domain/deployments/engine.js';
import type { EngineMessage } from '../../infra/sqs/engine-queue.js';
import { engineDeps } from '../shared/engine-wiring.js';
import { logger } from '../shared/logger.js';

export const makeHandler =
  (deps: () => EngineDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const byDeployment = new Map<string, { check: boolean; messageIds: string[] }>();
    const failures: string[] = [];
    for (const record of event.Records) {
      let message: EngineMessage;
      try {
        message = JSON.parse(record.body) as EngineMessage;
      } catch {
        logger.error('orchestrator message is not JSON; dropped', { messageId: record.messageId });
        continue;
      }
      const entry = byDeployment.get(message.deployment_id) ?? { check: false, messageIds: [] };
      entry.check ||= message.check;
      entry.messageIds.push(record.messageId);
      byDeployment.set(message.deployment_id, entry);
    }
    await Promise.all(
      [...byDeployment].map(async ([deploymentId, entry]) => {
        try {
          await advance(deps(), deploymentId, { check: entry.check });
        } catch (error) {
          logger.error('advancing a deployment failed; retried', { deploymentId, error });
          failures.push(...entry.messageIds);
        }
      }),
    );
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = makeHandler(engineDeps);
