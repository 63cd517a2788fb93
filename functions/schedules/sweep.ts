// schedule (EventBridge, every minute; locally a timer of the stack) -> sweep (domain/deployments/sweep.ts)
// -> Orchestration, PendingRequestRepository, the dispatch and orchestrator queues
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { sweep, type SweepDeps, type SweepReport } from '../../domain/deployments/sweep.js';
import { sweepDeps } from '../shared/deployments-wiring.js';
import { logger } from '../shared/logger.js';

export const makeHandler = (deps: () => SweepDeps) => async (): Promise<SweepReport> => {
  const report = await sweep(deps());
  if (report.errors.length > 0)
    logger.error('sweep: some work failed; tried again on the next run', { errors: report.errors });
  if (report.settled.length > 0 || report.recovered > 0 || report.rearmed.length > 0)
    logger.info('sweep', { ...report });
  return report;
};

export const handler = makeHandler(sweepDeps);
