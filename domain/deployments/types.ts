// Records of the deployments context (api.md "Deployment", "Pending dispatch request"; decisions.md section 7).
import type { Interpreter } from '../catalog/types.js';
import type { Tag } from '../targets/types.js';

export const DEPLOYMENT_STATES = [
  'pending',
  'queued',
  'running',
  'success',
  'failed',
  'cancelled',
  'rolling_back',
  'rolled_back',
] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];
export const TERMINAL_STATES: ReadonlySet<DeploymentState> = new Set(['success', 'failed', 'cancelled', 'rolled_back']);

export type SourceType = 'solution' | 'sequence' | 'action';
export type TargetMode = 'sequential' | 'parallel' | { readonly rolling: { readonly batch_size: number } };
export type FailureStrategy = 'stop_on_first_failure' | 'continue_on_failure' | 'ignore_failures';
export type RollbackStrategy = 'none' | 'failed_target_only' | 'all_executed';

/** The named source record: id, name and version (an action's version is the one chosen). */
export interface SourceRef {
  readonly id: string;
  readonly name: string;
  readonly version: string;
}

/** How a deployment runs: the create body's settings, defaults applied. */
export interface DeploymentConfig {
  readonly targetMode: TargetMode;
  readonly failureStrategy: FailureStrategy;
  readonly rollbackStrategy: RollbackStrategy;
  readonly priority: number;
  /** Per command, 1..86400. */
  readonly timeoutSeconds: number;
  readonly maxRetries: number;
  /** Overall; 0 = none. */
  readonly deploymentTimeoutSeconds: number;
  /** As given (UUIDs or short ids); the plan holds the resolved targets. */
  readonly targetIds: readonly string[];
  readonly targetTags: readonly Tag[];
  readonly targetTagsMatchAll: boolean;
  /** Deployment variables as given; secret values encrypted (see PlanVariable). */
  readonly variables: Readonly<Record<string, string>>;
  readonly promptedValues: Readonly<Record<string, string>>;
  readonly versionRequirement: string | null;
  readonly tenantId: string | null;
  readonly environmentId: string | null;
  readonly bypassCache: boolean;
}

export type StepState = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled' | 'rolled_back';

/** One step: one action on one target, as part of one sequence. */
export interface PlanStep {
  readonly id: string;
  readonly targetId: string;
  readonly targetName: string;
  readonly sequenceId: string | null;
  readonly sequenceName: string | null;
  readonly sequenceOrder: number;
  readonly actionId: string;
  readonly actionName: string;
  readonly actionSlug: string;
  readonly actionOrder: number;
  /** The action version the step runs (resolved at creation: a later version does not change a plan). */
  readonly actionVersion: string;
  readonly actionVersionId: string;
  readonly state: StepState;
  readonly startedAt: string | null;
  readonly completedAt: string | null;
  readonly exitCode: number | null;
  readonly errorMessage: string | null;
  readonly retryCount: number;
  readonly durationMs: number | null;
  /** On a rollback step: the step whose action version's rollback_script it runs (added when a rollback starts). */
  readonly rollbackOf?: string;
}

/** A variable as resolved for the plan; a secret's value is kept encrypted and never shown. */
export interface PlanVariable {
  readonly value: string;
  readonly secret: boolean;
}

export interface Plan {
  readonly targetCount: number;
  readonly steps: readonly PlanStep[];
  /** Name -> value; secret values encrypted (SecretCipher, context `deployment-variable`). */
  readonly resolvedVariables: Readonly<Record<string, PlanVariable>>;
  /** What planning said that the deployment keeps (a redeploy's dropped variables); absent when nothing. */
  readonly warnings?: readonly string[];
  /**
   * The scripts the plan runs, pinned when it was made (created or queued), by action version id: editing or
   * deleting a version afterwards changes nothing for this deployment. Absent on deployments planned before
   * pinning existed (the engine then reads the catalog, as it did).
   */
  readonly scripts?: Readonly<Record<string, StepScript>>;
  readonly tenantName: string | null;
  readonly environmentName: string | null;
  readonly createdAt: string;
}

/** An active freeze a deployment was allowed past, recorded for audit. */
export interface FreezeOverride {
  readonly reason: string;
  readonly by: string;
  readonly freezes: readonly { readonly id: string; readonly name: string; readonly ends_at: string }[];
}

/** Everything a deployment is made of before it gets an id and a state (what a pending request waits with). */
export interface DeploymentDraft {
  readonly sourceType: SourceType;
  readonly solution: SourceRef | null;
  readonly sequence: SourceRef | null;
  readonly action: SourceRef | null;
  readonly tenantId: string | null;
  readonly tenantName: string | null;
  readonly environmentId: string | null;
  readonly environmentName: string | null;
  readonly triggeredBy: string;
  /** The triggerer's name when it was created (the owner's for a credential); absent in records stored before it. */
  readonly triggeredByName?: string;
  readonly config: DeploymentConfig;
  readonly plan: Plan;
  readonly freezeOverride: FreezeOverride | null;
  readonly sourceDeploymentId: string | null;
}

export interface Deployment extends DeploymentDraft {
  readonly id: string;
  readonly shortId: string;
  readonly state: DeploymentState;
  readonly progress: number;
  readonly totalSteps: number;
  readonly completedSteps: number;
  readonly failedSteps: number;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly completedAt: string | null;
  readonly durationMs: number | null;
  readonly errorMessage: string | null;
  readonly analysisEnabled: boolean;
  readonly cancelReason: string | null;
  /** The orchestration instance it holds while not terminal. */
  readonly instanceId: string | null;
  /** Moves on every change: state changes are conditioned on it. */
  readonly revision: number;
  /**
   * Engine passes that failed in a row the same way (`kind`: the error's class), kept by the engine; a pass that
   * succeeds clears it. Absent when the last pass succeeded.
   */
  readonly passFailures?: PassFailures | undefined;
}

export interface PassFailures {
  readonly count: number;
  readonly kind: string;
}

/**
 * The side effects a terminal transaction still owes, written in that transaction (the outbox) and removed once
 * done: the agents' cancel notices, the dispatcher's wake-up, the final state_change of the event stream.
 */
export interface OutboxEntry {
  readonly deploymentId: string;
  /** The deployment's tenant (webhooks); absent in entries written before them. */
  readonly tenantId?: string | null;
  /** When the terminal write happened (the deployment's completed_at): the entry's place in the outbox. */
  readonly at: string;
  readonly cancelCommands: boolean;
  /**
   * With cancelCommands: the command of each step running when the deployment ended. The commands are found through
   * an eventually consistent index, which may not list one launched a moment before the end: these are read from the
   * table when it does not. Absent in entries written before.
   */
  readonly openCommands?: readonly string[];
  readonly wakeDispatcher: boolean;
  /** Appended to the event store unless the stream already ends with a terminal state_change. */
  readonly finalEvent: {
    readonly oldState: DeploymentState;
    readonly newState: DeploymentState;
    readonly message: string;
  } | null;
}

/** An orchestration instance and the deployment holding it, with when the engine's periodic check last ran. */
export interface HeldInstance {
  readonly instanceId: string;
  readonly deploymentId: string;
  readonly heldSince: string | null;
  readonly checkedAt: string | null;
}

export type PendingStatus = 'pending' | 'processing' | 'dispatched' | 'cancelled' | 'failed';
export const PENDING_STATUSES: readonly PendingStatus[] = [
  'pending',
  'processing',
  'dispatched',
  'cancelled',
  'failed',
];

export interface PendingRequest {
  readonly id: string;
  readonly status: PendingStatus;
  readonly priority: number;
  readonly tenantId: string | null;
  readonly tenantName: string | null;
  readonly environmentId: string | null;
  readonly environmentName: string | null;
  readonly triggeredBy: string;
  /** As the draft's; absent in records stored before it. */
  readonly triggeredByName?: string;
  readonly draft: DeploymentDraft;
  readonly queuedAt: string;
  readonly createdAt: string;
  readonly retryCount: number;
  readonly lastRetryAt: string | null;
  readonly errorMessage: string | null;
  readonly deploymentId: string | null;
  readonly dispatchedAt: string | null;
  readonly dispatchedToInstanceId: string | null;
  readonly processingSince: string | null;
  /** Why a pending request is passed over at dispatch (an active freeze) and until when; null otherwise. */
  readonly waitingReason?: string | null;
  readonly waitingUntil?: string | null;
}

/** Script details the executor needs per step (kept out of the plan the API shows). */
export interface StepScript {
  readonly script: string;
  readonly interpreter: Interpreter;
  readonly rollbackScript: string | null;
  readonly timeoutSeconds: number | null;
}

/**
 * A keyed create's claim on its Idempotency-Key: stored in the same write as the deployment it started or the request
 * it queued, so a retry whose first attempt committed (its answer lost: a 5xx, a dropped connection) finds what that
 * attempt made instead of making a second one (docs/decisions.md "A retried create finds what its key made").
 */
export interface CreateClaim {
  /** A hash of (user, credential, key): whose key it is, as the Idempotency-Key record's. */
  readonly scope: string;
  /** A hash of the request (method, path, body): a retry must be the same request. */
  readonly fingerprint: string;
  /** The key as sent, for the error that names it. */
  readonly key: string;
  /** When the create claimed it, and until when the claim holds (the key's 24 h; after it the key is free again). */
  readonly at: Date;
  readonly until: Date;
}

/** What a live claim names: the deployment its create started, or the request it queued. */
export interface ClaimedCreate {
  readonly kind: 'deployment' | 'request';
  readonly id: string;
  readonly fingerprint: string;
}
