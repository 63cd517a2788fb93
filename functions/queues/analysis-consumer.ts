// queue -> processAnalysis (domain/analysis/pipeline.ts) -> AnalysisRequestRepository, CommandRepository, provider
// Each message names one analysis request. A request to try again (or one another consumer holds) is reported as a
// batch item failure, so SQS delivers its message again after the visibility timeout; after max_retries the request
// is failed and its message consumed. A message that does not parse fails (functions/queues/batch.ts).
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { processAnalysis, type AnalysisDeps } from '../../domain/analysis/pipeline.js';
import { AnalysisMessage } from '../../infra/sqs/analysis-queue.js';
import { analysisDeps } from '../shared/analysis-wiring.js';
import { logger } from '../shared/logger.js';
import { RetryLater, sqsBatch } from './batch.js';

export const makeHandler = (deps: () => AnalysisDeps) =>
  sqsBatch(AnalysisMessage, async (message) => {
    let outcome: Awaited<ReturnType<typeof processAnalysis>>;
    try {
      outcome = await processAnalysis(deps(), message.request_id);
    } catch (error) {
      logger.error('analysing a failed command failed; retried', { requestId: message.request_id, error });
      throw error;
    }
    if (outcome === 'retry') throw new RetryLater(`analysis request ${message.request_id} retried`);
    if (outcome === 'failed') logger.warn('an analysis request failed for good', { requestId: message.request_id });
  });

export const handler = makeHandler(analysisDeps);
