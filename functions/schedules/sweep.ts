// schedule (EventBridge, every minute; locally a timer of the stack) -> sweep (domain/deployments/sweep.ts)
// -> Orchestration, PendingRequestRepository, the dispatch and orchestrator queues
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { sweep, type SweepDeps, type SweepReport } from '../../domain/deployments/sweep.js';
import { sweepDeps } from '../shared/deployments-wiring.js';
import { logger } from '../shared/logger.js';

/**
 * One run. A run in which some step failed (an outbox entry it could not settle) does the rest of its work, logs
 * what failed, and then fails the invocation: the sweep's Errors metric is what `SweepFailingAlarm` watches
 * (infra/monitoring.cjs), so a step failing minute after minute is an alarm, not only a log line. It is not retried
 * (maximumRetryAttempts: 0): the next minute's run tries again.
 */
export const makeHandler =
  (deps: () => SweepDeps, run: (deps: SweepDeps) => Promise<SweepReport> = sweep) =>
  async (): Promise<SweepReport> => {
    const report = await run(deps());
    if (report.settled.length > 0 || report.recovered > 0 || report.rearmed.length > 0)
      logger.info('sweep', { ...report });
    if (report.errors.length > 0) {
      logger.error('sweep: some work failed; tried again on the next run', { errors: report.errors });
      throw new Error(`sweep: ${report.errors.length} step(s) failed (logged above); the next run tries again`);
    }
    return report;
  };

export const handler = makeHandler(sweepDeps);
