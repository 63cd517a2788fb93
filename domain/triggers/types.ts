// Deploy triggers: a saved deployment request that another system (a CI pipeline, a Git host) starts by a signed
// call to POST /api/v1/hooks/{trigger_id}, acting with its owner's current permissions.
import type { CreateDeploymentCommand } from '../deployments/plan/command.js';

/** The saved request: the create body without dry_run and without a freeze override (a trigger never overrides). */
export type SavedRequest = Omit<CreateDeploymentCommand, 'dry_run' | 'override_freeze' | 'override_reason'>;

/** Where a value comes from in the incoming JSON: a dot path (`release.tag_name`, `commits.0.id`). */
export type PayloadPath = string;

export interface TriggerRules {
  /** Declared variable name -> where its value is in the payload (overrides the saved value). */
  readonly variables: Readonly<Record<string, PayloadPath>>;
  /** The version requirement from the payload (an action source), e.g. the tag a build produced. */
  readonly versionRequirement: PayloadPath | null;
}

/** A condition on the payload; a call whose payload fails any filter starts nothing (200, `triggered: false`). */
export interface TriggerFilter {
  readonly field: PayloadPath;
  /** The value, as a string, must be one of these. */
  readonly oneOf: readonly string[];
}

export interface Trigger {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly description: string | null;
  /** The owner: the trigger acts with this user's current permissions and tenant. */
  readonly ownerId: string;
  readonly tenantId: string | null;
  /** The saved request, its variables and prompted values sealed (SecretCipher, context `trigger:<id>`). */
  readonly request: SavedRequest;
  readonly rules: TriggerRules;
  readonly filters: readonly TriggerFilter[];
  readonly enabled: boolean;
  /** The signing secret (`whsec_` + base64), sealed: verifying an HMAC needs the secret itself, not a hash. */
  readonly sealedSecret: string;
  readonly lastTriggeredAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly revision: number;
}

export type TriggerChanges = Partial<
  Pick<
    Trigger,
    'name' | 'description' | 'request' | 'rules' | 'filters' | 'enabled' | 'sealedSecret' | 'lastTriggeredAt'
  >
>;
