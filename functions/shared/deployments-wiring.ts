// The composition root, deployments part: deployments, orchestration instances, pending requests, the dispatch
// queue, and (through targets-wiring) the commands a cancel stops.
import type { CancelDeps } from '../../domain/deployments/cancel.js';
import type { CreateDeps } from '../../domain/deployments/create.js';
import type { DeploymentsDeps } from '../../domain/deployments/deps.js';
import type { DispatchDeps } from '../../domain/deployments/dispatch.js';
import type { SweepDeps } from '../../domain/deployments/sweep.js';
import { DynamoCreateClaims } from '../../infra/dynamodb/create-claims.js';
import { DynamoDeploymentRepository } from '../../infra/dynamodb/deployment-repository.js';
import { DynamoOrchestration } from '../../infra/dynamodb/orchestration.js';
import { DynamoPendingRequestRepository } from '../../infra/dynamodb/pending-request-repository.js';
import { DynamoUserRepository } from '../../infra/dynamodb/user-repository.js';
import { SqsDispatchQueue } from '../../infra/sqs/dispatch-queue.js';
import { systemUuids } from '../../infra/system/uuids.js';
import { planDeps } from './deployments-plan-wiring.js';
import { logger } from './logger.js';
import { once } from './once.js';
import { deploymentEvents } from './stream-wiring.js';
import { engineQueue } from './queues-wiring.js';
import { targetsDeps } from './targets-wiring.js';
import { tenancyDeps } from './tenancy-wiring.js';
import { bestEffortDeploymentWebhooks, deploymentWebhooks } from './webhooks-wiring.js';
import { ids, infra, serviceMetrics, sqs } from './wiring.js';

export const deploymentsDeps = once((): DeploymentsDeps & DispatchDeps & CancelDeps => {
  const { config: cfg, db, clock } = infra();
  return {
    deployments: new DynamoDeploymentRepository(db, cfg.TABLE_NAME),
    orchestration: new DynamoOrchestration(db, cfg.TABLE_NAME, cfg.ORCHESTRATION_INSTANCES),
    pending: new DynamoPendingRequestRepository(db, cfg.TABLE_NAME),
    dispatch: new SqsDispatchQueue(sqs(), cfg.DISPATCH_QUEUE_URL),
    commands: targetsDeps().commands,
    events: deploymentEvents(),
    ids: ids(),
    uuids: systemUuids,
    clock,
    settings: { maxRetries: cfg.DISPATCH_MAX_RETRIES },
    engine: engineQueue(),
    // A create, a cancel and the dispatcher answer after their writes: their events are best effort (logged).
    webhooks: bestEffortDeploymentWebhooks(),
    metrics: serviceMetrics(),
    // A side effect given up after a commit (the request still answers 201/202): the sweep does it later.
    afterCommitFailed: (what, error) =>
      logger.warn('left to the sweep after the commit', {
        what,
        error: error instanceof Error ? error : String(error),
      }),
  };
});

/** The dispatcher also checks queued work again: active freezes and the triggering user's status. */
export const dispatchDeps = once((): DispatchDeps => ({
  ...deploymentsDeps(),
  recheck: { freezes: tenancyDeps().freezes, users: new DynamoUserRepository(infra().db, infra().config.TABLE_NAME) },
}));

/** Create and redeploy also resolve plans (catalog, targets, tenancy, freezes). */
export const createDeps = once((): CreateDeps => ({
  ...deploymentsDeps(),
  plan: planDeps(),
  claims: new DynamoCreateClaims(infra().db, infra().config.TABLE_NAME),
}));

/** The sweep: outbox, stuck requests, lost checks, lost wake-ups (an outbox's webhook event that fails stays owed). */
export const sweepDeps = once((): SweepDeps => ({
  ...deploymentsDeps(),
  engine: engineQueue(),
  webhooks: deploymentWebhooks(),
}));
