// queue -> advance (domain/deployments/engine.ts) -> DeploymentRepository, CommandRepository, Orchestration
// Each message names a deployment to advance; several for one deployment in a batch are advanced once (a check
// among them keeps the periodic chain going; the commands they report completed are handed to the pass). A failure fails that deployment's messages only, and SQS retries them.
// A message that does not parse fails (functions/queues/batch.ts).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { advance, type EngineDeps } from '../../domain/deployments/engine.js';
import { EngineMessage } from '../../infra/sqs/engine-queue.js';
import { logger } from '../shared/logger.js';
import { engineDeps } from '../shared/engine-wiring.js';
import { sqsGroupedBatch } from './batch.js';

export const makeHandler = (deps: () => EngineDeps) =>
  sqsGroupedBatch(
    EngineMessage,
    (message) => message.deployment_id,
    async (messages) => {
      const deploymentId = messages[0]!.deployment_id;
      try {
        await advance(deps(), deploymentId, {
          check: messages.some((message) => message.check),
          completed: messages.flatMap((message) => (message.command_id === undefined ? [] : [message.command_id])),
        });
      } catch (error) {
        logger.error('advancing a deployment failed; retried', { deploymentId, error });
        throw error;
      }
    },
  );

export const handler = makeHandler(engineDeps);
