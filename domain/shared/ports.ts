// Ports every bounded context may use. Adapters live in infra/; tests pass fakes from tests/fakes/.

export interface Clock {
  now(): Date;
}

/** A new record identity: a UUID and the record's short id (a SqId of a per-entity counter). */
export interface NewId {
  readonly id: string;
  readonly shortId: string;
}

export interface IdGenerator {
  next(entity: string): Promise<NewId>;
}

/** A record of a resource that was written (created, updated or deleted) at `at`, as the change feed lists it. */
export interface ChangedRecord {
  readonly id: string;
  /** The write's time (ISO 8601); entries come oldest first. */
  readonly at: string;
  readonly tenantId: string | null;
}

/**
 * What changed lately, per resource: each record's last write (a record written twice shows once, at its last
 * write). The feed is eventually consistent: readers look back a few seconds and skip what they already saw.
 */
export interface ChangeFeed {
  /** The entries written since `from` (ISO time), oldest first; at most `max` of them when given. */
  since(
    resource: 'deployments' | 'pending_deployments' | 'targets',
    from: string,
    max?: number,
  ): Promise<readonly ChangedRecord[]>;
}

/**
 * The service's business metrics, told where the events happen (infra/metrics.ts writes them as CloudWatch embedded
 * metrics; docs/cloud.md, "When something is wrong"). Fire and forget: a metric never fails the work it describes.
 */
export interface ServiceMetrics {
  /** A waiting request became a running deployment; `waitedMs` is how long it waited since it was requested. */
  deploymentStarted(waitedMs: number): void;
  /** A deployment reached its final state (`succeeded`, `failed`, ...). */
  deploymentFinished(state: string): void;
  /** An agent's socket was accepted. */
  agentConnected(): void;
}
