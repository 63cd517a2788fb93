// queue -> dispatchPending (domain/deployments/dispatch.ts) -> PendingRequestRepository, Orchestration
// Every message is a wake-up ("look at the queue"), so a batch needs one dispatch run: duplicates, reordering and
// redelivery are harmless. When the run fails, every message of the batch is reported failed and comes back.
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { dispatchPending, type DispatchDeps } from '../../domain/deployments/dispatch.js';
import { dispatchDeps } from '../shared/deployments-wiring.js';
import { logger } from '../shared/logger.js';

export const makeHandler =
  (deps: () => DispatchDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    try {
      const report = await dispatchPending(deps());
      if (report.dispatched.length > 0 || report.failed.length > 0)
        logger.info('dispatched', { dispatched: report.dispatched, failed: report.failed });
      return { batchItemFailures: [] };
    } catch (error) {
      logger.error('dispatch failed; the wake-ups will be retried', { error });
      return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
    }
  };

export const handler = makeHandler(dispatchDeps);
