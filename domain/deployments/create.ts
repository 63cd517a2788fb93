// Create and redeploy: resolve the body into a plan (plan/), apply the freeze rules, then start the deployment
// on a free orchestration instance or queue it (start.ts). `dry_run` stops after the checks and shows the plan.
import { ValidationError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { visibleDeployment } from './cancel.js';
import type { CreateDeploymentCommand, PlanDeps, RedeployOverrides } from './plan/command.js';
import { checkFreezes } from './plan/freezes.js';
import { checkSecretReuse, inheritedVariables, mergeRedeploy } from './plan/redeploy.js';
import { resolveDeployment } from './plan/resolve.js';
import type { ResolveOptions } from './plan/variables.js';
import type { DeploymentRepository } from './ports.js';
import type { Deployment, Plan, StepScript } from './types.js';
import { startOrQueue, type StartDeps, type StartOutcome } from './start.js';
import { deploymentDetailView, planView } from './views.js';

/** One deployment item holds its plan: this keeps it well under DynamoDB's 400 KB item limit. */
export const MAX_PLAN_STEPS = 500;

export interface CreateDeps extends StartDeps {
  readonly plan: PlanDeps;
  readonly deployments: DeploymentRepository;
}

export type CreateAnswer =
  | { readonly kind: 'dry_run'; readonly body: Record<string, unknown> }
  | { readonly kind: 'started' | 'queued'; readonly outcome: StartOutcome };

const resolveChecked = async (
  deps: CreateDeps,
  caller: Caller,
  command: CreateDeploymentCommand,
  sourceDeploymentId: string | null,
  options: ResolveOptions = {},
) => {
  const resolved = await resolveDeployment(deps.plan, caller, command, options);
  const freezeOverride = checkFreezes(resolved, caller, command);
  const steps = resolved.draft.plan.steps.length;
  if (steps > MAX_PLAN_STEPS) {
    throw ValidationError.field(
      'target_ids',
      `The plan has ${steps} steps (targets x actions); at most ${MAX_PLAN_STEPS} fit one deployment. Split it.`,
    );
  }
  return { ...resolved, draft: { ...resolved.draft, freezeOverride, sourceDeploymentId } };
};

export const createDeployment = async (
  deps: CreateDeps,
  caller: Caller,
  command: CreateDeploymentCommand,
): Promise<CreateAnswer> => {
  const resolved = await resolveChecked(deps, caller, command, null);
  if (command.dry_run === true) {
    return {
      kind: 'dry_run',
      body: {
        dry_run: true,
        valid: true,
        plan: planView(resolved.draft.plan),
        warnings: [...resolved.warnings],
        target_summary: resolved.targetSummary,
      },
    };
  }
  const outcome = await startOrQueue(deps, resolved.draft);
  return { kind: outcome.kind, outcome };
};

/** The spec's create answers: started {deployment_id, pending: false, message, deployment}, queued {pending_request_id, pending: true, message}. */
export const createAnswerBody = (outcome: StartOutcome, options: { plan: boolean } = { plan: true }) =>
  outcome.kind === 'started'
    ? {
        deployment_id: outcome.deployment.id,
        pending: false,
        message: `Deployment started on ${outcome.deployment.instanceId}: ${outcome.deployment.totalSteps} step(s) on ${outcome.deployment.plan.targetCount} target(s).`,
        deployment: deploymentDetailView(outcome.deployment, options),
      }
    : {
        pending_request_id: outcome.request.id,
        pending: true,
        queue_position: outcome.position,
        message: `Every orchestration instance is busy: the deployment is queued at position ${outcome.position} and starts when one is free.`,
      };

/** Redeploy: the original's source and configuration with the overrides; a new deployment (or a queued request). */
export const redeployDeployment = async (
  deps: CreateDeps,
  caller: Caller,
  id: string,
  overrides: RedeployOverrides,
): Promise<StartOutcome> => {
  const original = await visibleDeployment(deps, caller, id);
  const reuse = checkSecretReuse(caller, original, overrides);
  const command = mergeRedeploy(deps.plan.cipher, original, overrides, reuse);
  const resolved = await resolveChecked(deps, caller, command, original.id, {
    inherited: inheritedVariables(original, overrides),
  });
  const plan = resolved.draft.plan;
  const notes = [replannedNote(original, plan), ...(plan.warnings ?? [])];
  return startOrQueue(deps, { ...resolved.draft, plan: { ...plan, warnings: notes } });
};

/**
 * A redeploy plans anew from the current catalog (the version requirement is resolved again and the scripts are
 * pinned again): its plan says so, naming each action whose version or script differs from what the original ran.
 */
export const replannedNote = (original: Pick<Deployment, 'id' | 'plan'>, plan: Plan): string => {
  const ran = new Map(
    original.plan.steps.filter((s) => s.rollbackOf === undefined).map((s) => [s.actionId, s] as const),
  );
  const changes: string[] = [];
  const seen = new Set<string>();
  for (const step of plan.steps) {
    if (seen.has(step.actionId)) continue;
    seen.add(step.actionId);
    const before = ran.get(step.actionId);
    if (before === undefined) changes.push(`${step.actionName} ${step.actionVersion} (new)`);
    else if (before.actionVersion !== step.actionVersion)
      changes.push(`${step.actionName} ${step.actionVersion} (the original ran ${before.actionVersion})`);
    else if (!sameScript(original.plan.scripts?.[before.actionVersionId], plan.scripts?.[step.actionVersionId])) {
      changes.push(`${step.actionName} ${step.actionVersion} (its script changed since the original ran)`);
    }
  }
  const what = changes.length === 0 ? 'the same versions and scripts as the original' : changes.join(', ');
  return `Planned anew from the current catalog (redeploy of ${original.id}): ${what}.`;
};

const sameScript = (a: StepScript | undefined, b: StepScript | undefined): boolean =>
  a === undefined ||
  b === undefined ||
  (a.script === b.script && a.rollbackScript === b.rollbackScript && a.interpreter === b.interpreter);
