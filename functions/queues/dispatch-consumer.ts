// queue -> dispatchPending (domain/deployments/dispatch.ts) -> PendingRequestRepository, Orchestration
// Every message is a wake-up ("look at the queue"), so a batch needs one dispatch run: duplicates, reordering and
// redelivery are harmless. When the run fails, every message of the batch is reported failed and comes back. A
// message that does not parse fails (functions/queues/batch.ts).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { dispatchPending, type DispatchDeps } from '../../domain/deployments/dispatch.js';
import { DispatchMessage } from '../../infra/sqs/dispatch-queue.js';
import { dispatchDeps } from '../shared/deployments-wiring.js';
import { logger } from '../shared/logger.js';
import { sqsGroupedBatch } from './batch.js';

export const makeHandler = (deps: () => DispatchDeps) =>
  sqsGroupedBatch(
    DispatchMessage,
    () => 'the whole batch',
    async () => {
      try {
        const report = await dispatchPending(deps());
        if (report.dispatched.length > 0 || report.failed.length > 0)
          logger.info('dispatched', { dispatched: report.dispatched, failed: report.failed });
      } catch (error) {
        logger.error('dispatch failed; the wake-ups will be retried', { error });
        throw error;
      }
    },
  );

export const handler = makeHandler(dispatchDeps);
