// The composition root, events part: the deployment event store (written by cancel and the execution engine,
// read by the history endpoint and the streaming function), the deployment log stream's dependencies and the
// resource streams' (the repositories they poll). Kept apart from deployments-wiring and targets-wiring so the
// streaming function does not load the dispatcher, SQS or the agent protocol.
import { randomUUID } from 'node:crypto';
import type { DeploymentEventStore, KeyedEventAppender, KeyedEventLookup } from '../../domain/deployments/events.js';
import { sseGrantStillValid, verifySseGrant } from '../../domain/identity/sse-tokens.js';
import { DynamoStreamLeaseStore } from '../../infra/dynamodb/stream-lease-repository.js';
import { DynamoDeploymentEventStore } from '../../infra/dynamodb/deployment-event-store.js';
import { DynamoDeploymentRepository } from '../../infra/dynamodb/deployment-repository.js';
import { DynamoPendingRequestRepository } from '../../infra/dynamodb/pending-request-repository.js';
import { DynamoChangeFeed } from '../../infra/dynamodb/change-feed.js';
import { DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import type { LogStreamDeps } from '../../domain/streams/deployment-log.js';
import type { StreamCaller, StreamGuardDeps } from '../../domain/streams/guard.js';
import type { ResourceStreamDeps } from '../../domain/streams/resource-sources.js';
import { identityDeps } from './identity-wiring.js';
import { once } from './once.js';
import { withViewerPush } from './viewer-push-wiring.js';
import { infra } from './wiring.js';

/** The event store; every append is pushed to the deployment's viewers (viewer-push-wiring.ts) when there are any. */
export const deploymentEvents = once((): DeploymentEventStore & KeyedEventAppender & KeyedEventLookup =>
  withViewerPush(new DynamoDeploymentEventStore(infra().db, infra().config.TABLE_NAME)),
);

/** The caller of `?sse_token=`, with the re-check of its account or API key that an open stream repeats. */
const verifyStreamCaller = async (token: string | undefined): Promise<StreamCaller> => {
  const { caller, grant } = await verifySseGrant(identityDeps(), token);
  return { ...caller, stillValid: () => sseGrantStillValid(identityDeps(), grant) };
};

const streamGuard = once((): StreamGuardDeps => ({
  leases: new DynamoStreamLeaseStore(infra().db, infra().config.TABLE_NAME),
  limit: infra().config.STREAMS_PER_USER,
  clock: infra().clock,
  newLeaseId: randomUUID,
}));

export const logStreamDeps = once((): LogStreamDeps => ({
  verify: verifyStreamCaller,
  guard: streamGuard(),
  deployments: new DynamoDeploymentRepository(infra().db, infra().config.TABLE_NAME),
  events: deploymentEvents(),
  clock: infra().clock,
}));

export const resourceStreamDeps = once((): ResourceStreamDeps => ({
  verify: verifyStreamCaller,
  guard: streamGuard(),
  deployments: logStreamDeps().deployments,
  pending: new DynamoPendingRequestRepository(infra().db, infra().config.TABLE_NAME),
  targets: new DynamoTargetRepository(infra().db, infra().config.TABLE_NAME),
  changes: new DynamoChangeFeed(infra().db, infra().config.TABLE_NAME),
  clock: infra().clock,
}));
