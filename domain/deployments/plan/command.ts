// What a plan is made from and what it gives back: the create (and preview) body and the redeploy body as parsed,
// the ports the plan reads, and the resolved deployment with its warnings, target summary and freezes in force.
import type { ActionRepository, SequenceRepository, SolutionRepository } from '../../catalog/ports.js';
import type { SecretCipher } from '../../identity/ports.js';
import type { EnvironmentLookup, TenantLookup } from '../../shared/lookups.js';
import type { Clock } from '../../shared/ports.js';
import type { TargetRepository } from '../../targets/ports.js';
import type { Tag } from '../../targets/types.js';
import type { FreezeRepository } from '../../tenancy/ports.js';
import type { Freeze } from '../../tenancy/types.js';
import type { Uuids } from '../ports.js';
import type { DeploymentDraft, FailureStrategy, RollbackStrategy, TargetMode } from '../types.js';

export interface PlanDeps {
  readonly actions: Pick<ActionRepository, 'find'>;
  readonly sequences: Pick<SequenceRepository, 'find'>;
  readonly solutions: Pick<SolutionRepository, 'find'>;
  readonly targets: Pick<TargetRepository, 'find' | 'listAll'>;
  readonly tenants: TenantLookup;
  readonly environments: EnvironmentLookup;
  readonly freezes: Pick<FreezeRepository, 'listEndingAfter'>;
  readonly cipher: SecretCipher;
  readonly uuids: Uuids;
  readonly clock: Clock;
}

/** The create (and preview) body as parsed, snake_case as on the wire. */
export interface CreateDeploymentCommand {
  readonly solution_id?: string | null | undefined;
  readonly sequence_id?: string | null | undefined;
  readonly action_id?: string | null | undefined;
  /** For an action source only; sequence and solution sources use their steps' requirements. */
  readonly version_requirement?: string | null | undefined;
  readonly target_ids?: readonly string[] | undefined;
  readonly target_tags?: readonly Tag[] | undefined;
  readonly target_tags_match_all?: boolean | undefined;
  readonly target_mode?: TargetMode | undefined;
  readonly failure_strategy?: FailureStrategy | undefined;
  readonly rollback_strategy?: RollbackStrategy | undefined;
  readonly priority?: number | undefined;
  readonly timeout_seconds?: number | undefined;
  readonly max_retries?: number | undefined;
  readonly deployment_timeout_seconds?: number | undefined;
  readonly variables?: Readonly<Record<string, string>> | undefined;
  readonly prompted_values?: Readonly<Record<string, string>> | undefined;
  readonly tenant_id?: string | null | undefined;
  readonly environment_id?: string | null | undefined;
  readonly bypass_cache?: boolean | undefined;
  readonly dry_run?: boolean | undefined;
  readonly override_freeze?: boolean | undefined;
  readonly override_reason?: string | null | undefined;
}

/** The redeploy body as parsed: every field optional. */
export type RedeployOverrides = Pick<
  CreateDeploymentCommand,
  | 'variables'
  | 'target_ids'
  | 'target_tags'
  | 'target_mode'
  | 'failure_strategy'
  | 'rollback_strategy'
  | 'priority'
  | 'timeout_seconds'
  | 'max_retries'
  | 'prompted_values'
  | 'bypass_cache'
  | 'override_freeze'
  | 'override_reason'
> & {
  /** Never null in a redeploy: the original's environment is kept unless another is named. */
  readonly environment_id?: string | undefined;
};

export interface TargetSummary {
  readonly total: number;
  readonly online: number;
  readonly offline: number;
  readonly stale: number;
}

export interface ResolvedDeployment {
  /** `freezeOverride` is null here: checkFreezes decides it. */
  readonly draft: DeploymentDraft;
  readonly warnings: readonly string[];
  readonly targetSummary: TargetSummary;
  /** Freezes in force now that match the deployment, the one ending last first. */
  readonly activeFreezes: readonly Freeze[];
}
