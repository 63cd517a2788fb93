// queue -> processAnalysis (domain/analysis/pipeline.ts) -> AnalysisRequestRepository, CommandRepository, provider
// Each message names one analysis request. A request to try again (or one another consumer holds) is reported as a
// batch item failure, so SQS delivers its message again after the visibility timeout; after max_retries the request
// is failed and its message consumed. A message that is not JSON is dropped (logged).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processAnalysis, type AnalysisDeps } from '../../domain/analysis/pipeline.js';
import type { AnalysisMessage } from '../../infra/sqs/analysis-queue.js';
import { analysisDeps } from '../shared/analysis-wiring.js';
import { logger } from '../shared/logger.js';

export const makeHandler =
  (deps: () => AnalysisDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failures: string[] = [];
    await Promise.all(
      event.Records.map(async (record) => {
        let message: AnalysisMessage;
        try {
          message = JSON.parse(record.body) as AnalysisMessage;
        } catch {
          logger.error('analysis message is not JSON; dropped', { messageId: record.messageId });
          return;
        }
        try {
          const outcome = await processAnalysis(deps(), String(message.request_id));
          if (outcome === 'retry') failures.push(record.messageId);
          if (outcome === 'failed')
            logger.warn('an analysis request failed for good', { requestId: message.request_id });
        } catch (error) {
          logger.error('analysing a failed command failed; retried', { requestId: message.request_id, error });
          failures.push(record.messageId);
        }
      }),
    );
    return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = makeHandler(analysisDeps);
