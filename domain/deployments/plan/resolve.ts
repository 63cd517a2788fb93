// The plan: from a create body to a DeploymentDraft, without side effects. Create, preview, redeploy and the
// dispatcher all resolve through here; each step is its own file in this folder.
//
// resolveDeployment, step by step (each failure a 400 naming its field unless said otherwise):
//   1. tenancy (scope.ts): the deployment's tenant (a tenant-scoped caller's own; another answers 403
//      tenant_restriction) and environment (visible, global or the tenant's; a tenant's environment without
//      tenant_id brings its tenant);
//   2. source (sources.ts): the solution, sequence or action, visible and usable by the deployment's tenant; a
//      solution expands to its sequences, a sequence to its steps, in their order; each action runs the newest
//      version satisfying its requirement (the step's, or the body's version_requirement for an action source;
//      latest when none);
//   3. targets (targets.ts): target_ids (each visible, of the deployment's tenant and environment) and targets
//      matching target_tags (AND or OR), de-duplicated, by name then id; none at all is a 400;
//   4. variables (variables.ts): action defaults < body `variables` < `prompted_values`; a required one without a
//      value is a 400; secret ones are encrypted wherever they are kept;
//   5. the plan: one step per target x sequence x action, target by target (steps.ts); the config with defaults
//      (config.ts); the scripts pinned (scripts.ts); the freezes in force and the warnings a preview shows.
import type { FieldProblem } from '../../errors.js';
import type { Caller } from '../../identity/types.js';
import type { Target } from '../../targets/types.js';
import { activeFreezes } from '../../tenancy/freezes.js';
import type { DeploymentConfig, DeploymentDraft } from '../types.js';
import type { CreateDeploymentCommand, PlanDeps, ResolvedDeployment } from './command.js';
import { deploymentConfig } from './config.js';
import { freezeWarnings } from './freezes.js';
import { invalid } from './problems.js';
import { resolveScope } from './scope.js';
import { pinnedScripts } from './scripts.js';
import { resolveSource, type ResolvedSource } from './sources.js';
import { planSteps } from './steps.js';
import { resolveTargets, targetWarnings } from './targets.js';
import { resolveVariables, type ResolveOptions, type ResolvedVariables } from './variables.js';

/** What a preview says of the source's version requirement, the variables and a rolling batch as wide as the fleet. */
const planWarnings = (
  source: ResolvedSource,
  command: CreateDeploymentCommand,
  variables: ResolvedVariables,
  config: DeploymentConfig,
  targets: readonly Target[],
): string[] => [
  ...(source.sourceType !== 'action' && command.version_requirement != null
    ? [`version_requirement is ignored for a ${source.sourceType}: each step uses its own requirement.`]
    : []),
  ...variables.dropped,
  ...variables.warnings,
  ...(typeof config.targetMode === 'object' &&
  config.targetMode.rolling.batch_size >= targets.length &&
  targets.length > 1
    ? [`The rolling batch size (${config.targetMode.rolling.batch_size}) covers all ${targets.length} targets at once.`]
    : []),
];

/**
 * The draft of the deployment the command describes, the warnings a preview shows, the target summary and the
 * freezes in force. No side effects. ValidationError (400) for anything the command names that does not resolve,
 * ForbiddenError (403) for another tenant; never DEPLOYMENT_FROZEN (see checkFreezes).
 */
export const resolveDeployment = async (
  deps: PlanDeps,
  caller: Caller,
  command: CreateDeploymentCommand,
  options: ResolveOptions = {},
): Promise<ResolvedDeployment> => {
  const now = deps.clock.now();
  const scope = await resolveScope(deps, caller, command);
  const tenantId = scope.tenant?.id ?? null;
  const environmentId = scope.environment?.id ?? null;
  const problems: FieldProblem[] = [];
  const source = await resolveSource(deps, caller, tenantId, command, problems);
  const targets = await resolveTargets(deps, caller, scope, command, problems);
  invalid(problems);
  const resolvedSource = source as ResolvedSource; // no problem: resolved
  const variables = resolveVariables(deps, resolvedSource, command, options);
  const config = deploymentConfig(command, variables, tenantId, environmentId);

  const draft: DeploymentDraft = {
    sourceType: resolvedSource.sourceType,
    solution: resolvedSource.solution,
    sequence: resolvedSource.sequence,
    action: resolvedSource.action,
    tenantId,
    tenantName: scope.tenant?.name ?? null,
    environmentId,
    environmentName: scope.environment?.name ?? null,
    triggeredBy: caller.userId,
    ...(caller.userName === undefined ? {} : { triggeredByName: caller.userName }),
    config,
    plan: {
      targetCount: targets.length,
      steps: planSteps(deps.uuids, targets, resolvedSource.actions),
      resolvedVariables: variables.resolved,
      ...(variables.dropped.length === 0 ? {} : { warnings: variables.dropped }),
      scripts: pinnedScripts(resolvedSource.actions, `${resolvedSource.sourceType}_id`),
      tenantName: scope.tenant?.name ?? null,
      environmentName: scope.environment?.name ?? null,
      createdAt: now.toISOString(),
    },
    freezeOverride: null,
    sourceDeploymentId: null,
  };

  const freezes = await activeFreezes(deps, {
    tenantId,
    solutionId: resolvedSource.solution?.id ?? null,
    environmentId,
    at: now,
  });
  const { summary, warnings: targetNotes } = targetWarnings(targets, now);
  const warnings = [
    ...targetNotes,
    ...freezeWarnings(freezes, caller, command),
    ...planWarnings(resolvedSource, command, variables, config, targets),
  ];
  return { draft, warnings, targetSummary: summary, activeFreezes: freezes };
};
