// schedule (EventBridge, every minute; locally a timer of the stack) -> sweep (domain/deployments/sweep.ts)
// -> Orchestration, PendingRequestRepository, the dispatch and orchestrator queues; then expireViewers
// (domain/streams/viewer-revocation.ts) -> ViewerRegistry, ViewerPush: viewer connections past their expiry closed
import '../shared/secrets-bootstrap.js'; // first: the secrets, before any module reads the environment
import { sweep, type SweepDeps, type SweepReport } from '../../domain/deployments/sweep.js';
import type { ViewerChannelDeps } from '../../domain/streams/viewer-channel.js';
import { expireViewers } from '../../domain/streams/viewer-revocation.js';
import { sweepDeps } from '../shared/deployments-wiring.js';
import { logger } from '../shared/logger.js';
import { viewerExpiryDeps } from '../shared/viewer-connections-wiring.js';

/** Expired viewer connections closed per run; more wait for the next run. */
export const VIEWERS_PER_SWEEP = 100;

type ExpiryDeps = Pick<ViewerChannelDeps, 'registry' | 'push' | 'clock' | 'warn'>;

/**
 * One run: the sweep, then the expired viewer connections. A run in which some step failed (an outbox entry it could
 * not settle, the viewers' expiry) does the rest of its work, logs what failed, and then fails the invocation: the
 * sweep's Errors metric is what `SweepFailingAlarm` watches (infra/monitoring.cjs), so a step failing minute after
 * minute is an alarm, not only a log line. It is not retried (maximumRetryAttempts: 0): the next minute's run tries
 * again.
 */
export const makeHandler =
  (
    deps: () => SweepDeps,
    run: (deps: SweepDeps) => Promise<SweepReport> = sweep,
    viewers: () => ExpiryDeps | undefined = () => undefined,
  ) =>
  async (): Promise<SweepReport & { readonly viewersClosed: number }> => {
    const report = await run(deps());
    const channel = viewers();
    const errors = [...report.errors];
    const viewersClosed =
      channel === undefined
        ? 0
        : await expireViewers(channel, VIEWERS_PER_SWEEP).catch((error: unknown) => {
            logger.error('sweep: closing expired viewer connections failed', { error });
            errors.push('closing expired viewer connections');
            return 0;
          });
    if (report.settled.length > 0 || report.recovered > 0 || report.rearmed.length > 0 || viewersClosed > 0)
      logger.info('sweep', { ...report, viewersClosed });
    if (errors.length > 0) {
      logger.error('sweep: some work failed; tried again on the next run', { errors });
      throw new Error(`sweep: ${errors.length} step(s) failed (logged above); the next run tries again`);
    }
    return { ...report, viewersClosed };
  };

export const handler = makeHandler(sweepDeps, sweep, viewerExpiryDeps);
