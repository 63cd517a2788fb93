// Records of the catalog context: actions and their versions, sequences of action steps, solutions of sequences
// (decisions.md section 5). `revision` and `refCount` make references race-safe (see ports.ts).

export const INTERPRETERS = ['sh', 'bash', 'node', 'python3'] as const;
export type Interpreter = (typeof INTERPRETERS)[number];

/** A variable a version's script reads from its environment. */
export interface ActionVariable {
  /** An environment variable name: `^[A-Za-z_][A-Za-z0-9_]*$`, unique within its version. */
  readonly name: string;
  readonly description: string | null;
  readonly required: boolean;
  /** Never set on a secret variable: secrets are given at deployment time, not stored in the catalog. */
  readonly default: string | null;
  /** Masked in command output. */
  readonly secret: boolean;
}

export interface Action {
  readonly id: string;
  readonly shortId: string;
  /** Unique (case-insensitive) within its scope: its tenant, or the global catalog. Fixed at creation. */
  readonly slug: string;
  readonly name: string;
  readonly description: string | null;
  /** null: a global action, usable by every tenant. Fixed at creation. */
  readonly tenantId: string | null;
  /** The highest version by semver precedence (derived from the versions, kept on the record for lists). */
  readonly latestVersion: string;
  readonly versionCount: number;
  /** Moves on every change of the versions and every new reference: writes that depend on them are conditioned on it. */
  readonly revision: number;
  /** How many sequences use the action: it cannot be deleted while this is above 0. */
  readonly refCount: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ActionVersion {
  readonly id: string;
  readonly actionId: string;
  /** A semantic version, normalised (`semver.valid`): `v1.2.3` is stored as `1.2.3`. */
  readonly version: string;
  readonly script: string;
  readonly interpreter: Interpreter;
  readonly rollbackScript: string | null;
  /** 1..86400; null: the deployment's timeout applies. */
  readonly timeoutSeconds: number | null;
  readonly variables: readonly ActionVariable[];
  readonly changelog: string | null;
  readonly createdAt: string;
  /** The user who created the version. */
  readonly createdBy: string;
}

export interface ActionWithVersions {
  readonly action: Action;
  /** Newest first by semver precedence. */
  readonly versions: readonly ActionVersion[];
}

export interface SequenceStep {
  /** 1..n, unique within the sequence; steps are kept sorted by it. */
  readonly order: number;
  readonly actionId: string;
  /** A semver range as given (`^1.2`, `1.4.0`, ...); null: the action's latest version. */
  readonly versionRequirement: string | null;
}

export interface Sequence {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly description: string | null;
  /** The sequence's own semantic version (default 1.0.0). */
  readonly version: string;
  /** null: global; a global sequence uses only global actions, a tenant's uses global ones and its own. Fixed at creation. */
  readonly tenantId: string | null;
  readonly steps: readonly SequenceStep[];
  readonly revision: number;
  /** How many solutions use the sequence: it cannot be deleted while this is above 0. */
  readonly refCount: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface SolutionEntry {
  readonly order: number;
  readonly sequenceId: string;
}

export interface Solution {
  readonly id: string;
  readonly shortId: string;
  readonly name: string;
  readonly description: string | null;
  readonly version: string;
  /** Same rule as sequences: a global solution uses only global sequences. Fixed at creation. */
  readonly tenantId: string | null;
  readonly sequences: readonly SolutionEntry[];
  readonly revision: number;
  /** Records of other contexts that reference the solution (deployment freezes may): no delete while above 0. */
  readonly refCount: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}
