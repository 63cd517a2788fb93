// The catalog's records as the API shows them (snake_case, decisions.md section 5).
import type { Action, ActionVersion, Sequence, Solution } from './types.js';

export const versionView = (version: ActionVersion) => ({
  id: version.id,
  action_id: version.actionId,
  version: version.version,
  script: version.script,
  interpreter: version.interpreter,
  rollback_script: version.rollbackScript,
  timeout_seconds: version.timeoutSeconds,
  variables: version.variables.map((v) => ({
    name: v.name,
    description: v.description,
    required: v.required,
    default: v.default,
    secret: v.secret,
  })),
  changelog: version.changelog,
  created_at: version.createdAt,
  created_by: version.createdBy,
});

export const actionView = (action: Action) => ({
  id: action.id,
  short_id: action.shortId,
  slug: action.slug,
  name: action.name,
  description: action.description,
  tenant_id: action.tenantId,
  latest_version: action.latestVersion,
  created_at: action.createdAt,
  updated_at: action.updatedAt,
});

/** `versions` newest first. */
export const actionDetail = (action: Action, versions: readonly ActionVersion[]) => ({
  ...actionView(action),
  versions: versions.map(versionView),
});

export const sequenceView = (sequence: Sequence) => ({
  id: sequence.id,
  short_id: sequence.shortId,
  name: sequence.name,
  description: sequence.description,
  version: sequence.version,
  tenant_id: sequence.tenantId,
  steps: sequence.steps.map((s) => ({
    order: s.order,
    action_id: s.actionId,
    version_requirement: s.versionRequirement,
  })),
  created_at: sequence.createdAt,
  updated_at: sequence.updatedAt,
});

export const solutionView = (solution: Solution) => ({
  id: solution.id,
  short_id: solution.shortId,
  name: solution.name,
  description: solution.description,
  version: solution.version,
  tenant_id: solution.tenantId,
  sequences: solution.sequences.map((s) => ({ order: s.order, sequence_id: s.sequenceId })),
  created_at: solution.createdAt,
  updated_at: solution.updatedAt,
});
