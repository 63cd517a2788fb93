// The preview use case: the plan a create would make, with its warnings, and no side effects.
import type { Caller } from '../../identity/types.js';
import { frozenBy } from '../errors.js';
import type { SourceRef } from '../types.js';
import { planView } from '../views.js';
import type { CreateDeploymentCommand, PlanDeps } from './command.js';
import { resolveDeployment } from './resolve.js';

/** api.md "Deployment preview result" (plus `active_freezes`). No side effects; a freeze is a warning here. */
export const previewDeployment = async (deps: PlanDeps, caller: Caller, command: CreateDeploymentCommand) => {
  const { draft, warnings, targetSummary, activeFreezes: freezes } = await resolveDeployment(deps, caller, command);
  const plan = planView(draft.plan);
  const source = (draft.solution ?? draft.sequence ?? draft.action) as SourceRef;
  return {
    plan,
    warnings: [...warnings],
    target_summary: targetSummary,
    variables: plan.resolved_variables,
    source_type: draft.sourceType,
    source_name: source.name,
    source_version: source.version,
    active_freezes: freezes.map(frozenBy),
  };
};
