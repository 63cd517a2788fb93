// Ports of the deployments context. Adapters: infra/dynamodb/{deployment,orchestration,pending-request}-repository.ts,
// infra/sqs/dispatch-queue.ts.
import type { ClaimedCreate, CreateClaim, Deployment, HeldInstance, OutboxEntry, PendingRequest } from './types.js';

/** What the deployments list filters, counts and orders by: a deployment without its plan (decisions.md). */
export type DeploymentSummary = Pick<
  Deployment,
  'id' | 'tenantId' | 'state' | 'environmentId' | 'sourceType' | 'triggeredBy' | 'createdAt'
>;

export interface DeploymentRepository {
  get(id: string): Promise<Deployment | undefined>;
  /** By UUID or short id. */
  find(idOrShortId: string): Promise<Deployment | undefined>;
  /** Every deployment, in full (the resource streams' snapshots; the list reads `listSummaries`). */
  listAll(): Promise<readonly Deployment[]>;
  /**
   * Every deployment's summary, read without its plan (the list filters, counts and pages them in memory, then
   * reads only the page's deployments with `getMany`; see docs/decisions.md).
   */
  listSummaries(): Promise<readonly DeploymentSummary[]>;
  /** The deployments that exist among `ids` (one batch read per 100), in no particular order. */
  getMany(ids: readonly string[]): Promise<readonly Deployment[]>;
  /** Replaces the deployment if its revision is still `previous.revision`; false otherwise. */
  update(previous: Deployment, next: Deployment): Promise<boolean>;
  /**
   * Counts a failed engine pass of a deployment that is not terminal: one more when the last failure was of the
   * same `kind`, else 1. Answers the count, or undefined when the deployment is gone or terminal.
   */
  recordFailedPass(id: string, kind: string): Promise<number | undefined>;
  /** Clears the count after a pass that succeeded without writing (a write clears it anyway). */
  clearFailedPasses(deployment: Deployment): Promise<void>;
}

/** The orchestration instances (decisions.md section 7): one running deployment holds one. */
export interface Orchestration {
  /** The configured number of instances (ORCHESTRATION_INSTANCES until an admin sets it). */
  capacity(): Promise<number>;
  setCapacity(instances: number): Promise<void>;
  /** Instance id -> the deployment holding it. */
  holders(): Promise<ReadonlyMap<string, string>>;
  /**
   * Stores the new deployment holding a free instance, in one transaction (and, for a dispatched request, its
   * move to dispatched). Returns the instance id, null when it was stored but has ended already (an answer lost
   * after the commit, read back once the deployment was over: it holds no instance), or undefined when every
   * instance is taken (nothing stored). With a `claim` (a keyed create), the claim is stored in the same transaction,
   * naming the deployment; a claim that another create holds: CreateClaimedError, nothing stored.
   */
  start(
    deployment: Deployment,
    dispatched?: { readonly request: PendingRequest; readonly at: Date },
    claim?: CreateClaim,
  ): Promise<string | null | undefined>;
  /**
   * Moves a deployment to a terminal state and frees its instance in one transaction, conditioned on the
   * revision it read, and writes `owed` to the outbox in the same transaction; false when the deployment changed
   * meanwhile.
   */
  finish(previous: Deployment, next: Deployment, owed?: OutboxEntry): Promise<boolean>;
  /** Outbox entries written before `before`, oldest first, at most `limit`. */
  outbox(before: Date, limit: number): Promise<readonly OutboxEntry[]>;
  /** The outbox entry of a deployment that ended at `at`, if still there. */
  outboxEntry(deploymentId: string, at: string): Promise<OutboxEntry | undefined>;
  /** Removes a done outbox entry (absent already: nothing happens). */
  settled(entry: OutboxEntry): Promise<void>;
  /** Every held instance, with when its holder's periodic check last ran. */
  heldInstances(): Promise<readonly HeldInstance[]>;
  /**
   * Records that the periodic check of the deployment holding `instanceId` runs at `at`, only if the last one was
   * at least `minGapMs` before (and the deployment still holds the instance): false means another check chain ran
   * recently, or the instance is not the deployment's any more.
   */
  recordCheck(instanceId: string, deploymentId: string, at: Date, minGapMs: number): Promise<boolean>;
}

/** The claims keyed creates hold (written by Orchestration.start and PendingRequestRepository.create). */
export interface CreateClaims {
  /** The claim of `scope` that still holds at `now`, if any. */
  get(scope: string, now: Date): Promise<ClaimedCreate | undefined>;
}

export interface PendingRequestRepository {
  /**
   * Stores a new request (status pending), in the dispatch order; with a `claim` (a keyed create), the claim in the
   * same transaction, naming the request (held by another create: CreateClaimedError, nothing stored).
   */
  create(request: PendingRequest, claim?: CreateClaim): Promise<void>;
  get(id: string): Promise<PendingRequest | undefined>;
  /** Every request, any status (the pending list filters in memory). */
  listAll(): Promise<readonly PendingRequest[]>;
  /** Pending requests in dispatch order: highest priority first, then oldest. */
  queue(limit: number): Promise<readonly PendingRequest[]>;
  /**
   * Where a pending request stands in the queue (1: next), counted without reading the requests (a COUNT query of
   * the queue up to it); undefined when the queue up to it is empty (it was dispatched or cancelled meanwhile).
   */
  position(request: PendingRequest): Promise<number | undefined>;
  /** pending -> processing; false when it was not pending. */
  claim(request: PendingRequest, at: Date): Promise<boolean>;
  /** processing -> pending (no instance after all, or a retry), recording an error when given. */
  release(
    request: PendingRequest,
    error: { readonly message: string; readonly at: Date } | undefined,
  ): Promise<boolean>;
  /** processing -> failed with the error. */
  fail(request: PendingRequest, message: string, at: Date): Promise<boolean>;
  /** pending or processing -> cancelled; false when it was in a terminal status. */
  cancel(request: PendingRequest, at: Date): Promise<boolean>;
  /** Requests in processing, the oldest claim first, at most `limit` (a narrow index: only processing ones). */
  processing(limit: number): Promise<readonly PendingRequest[]>;
  /** Records why a pending request waits (null, null: it no longer does); false when it is not pending. */
  setWaiting(request: PendingRequest, reason: string | null, until: string | null): Promise<boolean>;
}

/** Wakes the dispatcher (an SQS message to its consumer). */
export interface DispatchQueue {
  wake(reason: string): Promise<void>;
}

/** Random UUIDs for records that need no short id (plan steps). */
export interface Uuids {
  uuid(): string;
}
