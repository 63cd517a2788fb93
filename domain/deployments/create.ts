// Create and redeploy: resolve the body into a plan (plan/), apply the freeze rules, then start the deployment
// on a free orchestration instance or queue it (start.ts). `dry_run` stops after the checks and shows the plan.
import { IdempotencyKeyReusedError, ValidationError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { KEY_HOLDS_SECONDS, KeyInFlightError, type KeyedRequest } from '../shared/idempotency.js';
import { visibleDeployment } from './cancel.js';
import type { CreateDeploymentCommand, PlanDeps, RedeployOverrides } from './plan/command.js';
import { checkFreezes } from './plan/freezes.js';
import { checkSecretReuse, inheritedVariables, mergeRedeploy } from './plan/redeploy.js';
import { resolveDeployment } from './plan/resolve.js';
import type { ResolveOptions } from './plan/variables.js';
import type { CreateClaims, DeploymentRepository } from './ports.js';
import type { CreateClaim, Deployment, DeploymentDraft, Plan, StepScript } from './types.js';
import { CreateClaimedError, startOrQueue, type StartDeps, type StartOutcome } from './start.js';
import { deploymentDetailView, planView } from './views.js';

/**
 * One deployment item holds its plan (its steps packed, ~55 bytes each): 2,000 steps keep it well under DynamoDB's
 * 400 KB item limit, and a fleet of 1,000 hosts (two actions each) fits one deployment.
 */
export const MAX_PLAN_STEPS = 2000;

export interface CreateDeps extends StartDeps {
  readonly plan: PlanDeps;
  readonly deployments: DeploymentRepository;
  readonly claims: CreateClaims;
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

/**
 * What a keyed create (or redeploy) made before, when its key's claim still holds: a retry of a create that
 * committed and lost its answer gets that deployment (or queued request) again, never a second one. The same key
 * for another request, or naming one the caller's current tenant does not see (it was moved since): 422, as a
 * replay's. Undefined: the key names nothing yet.
 */
const claimedBefore = async (
  deps: CreateDeps,
  caller: Caller,
  keyed: KeyedRequest,
): Promise<StartOutcome | undefined> => {
  const claimed = await deps.claims.get(keyed.scope, deps.clock.now());
  if (claimed === undefined) return undefined;
  if (claimed.fingerprint !== keyed.fingerprint) throw new IdempotencyKeyReusedError(keyed.key);
  const made =
    claimed.kind === 'deployment' ? await deps.deployments.get(claimed.id) : await deps.pending.get(claimed.id);
  if (made === undefined) return undefined;
  // As visibleDeployment: a tenant's caller sees its own tenant's deployments and requests only.
  if (caller.tenantId !== null && made.tenantId !== caller.tenantId) throw new IdempotencyKeyReusedError(keyed.key);
  if ('state' in made) return { kind: 'started', deployment: made };
  const request = made;
  const position = request.status === 'pending' ? await deps.pending.position(request) : undefined;
  return { kind: 'queued', request, position: position ?? 1 };
};

/**
 * A retry while the key's first request still holds it: what that request made, once its claim is stored (it
 * committed, whatever it answered), else 409 (it has made nothing yet). Nothing is planned or started here.
 */
const madeInFlight = async (deps: CreateDeps, caller: Caller, keyed: KeyedRequest): Promise<StartOutcome> => {
  const made = await claimedBefore(deps, caller, keyed);
  if (made === undefined) throw new KeyInFlightError();
  return made;
};

/** What the key made before (see claimedBefore), or, while its first request holds it, see madeInFlight. */
const madeBefore = (deps: CreateDeps, caller: Caller, keyed: KeyedRequest): Promise<StartOutcome | undefined> =>
  keyed.inFlight === true ? madeInFlight(deps, caller, keyed) : claimedBefore(deps, caller, keyed);

/**
 * Starts or queues the draft; keyed, the claim is stored with the new deployment or request (a create that claimed
 * the key meanwhile wins, and what it made is answered). The caller looked for what the key made before first.
 */
const startOnce = async (
  deps: CreateDeps,
  caller: Caller,
  draft: DeploymentDraft,
  keyed: KeyedRequest | undefined,
): Promise<StartOutcome> => {
  if (keyed === undefined) return startOrQueue(deps, draft);
  const at = deps.clock.now();
  const claim: CreateClaim = { ...keyed, at, until: new Date(at.getTime() + KEY_HOLDS_SECONDS * 1000) };
  try {
    return await startOrQueue(deps, draft, claim);
  } catch (error) {
    if (!(error instanceof CreateClaimedError)) throw error;
    const made = await claimedBefore(deps, caller, keyed);
    if (made === undefined) throw error;
    return made;
  }
};

export const createDeployment = async (
  deps: CreateDeps,
  caller: Caller,
  command: CreateDeploymentCommand,
  keyed?: KeyedRequest,
): Promise<CreateAnswer> => {
  // A retry of a keyed create that committed: answered what it made, before anything is planned (or refused) anew.
  const before = keyed === undefined || command.dry_run === true ? undefined : await madeBefore(deps, caller, keyed);
  if (before !== undefined) return { kind: before.kind, outcome: before };
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
  const outcome = await startOnce(deps, caller, resolved.draft, keyed);
  return { kind: outcome.kind, outcome };
};

/** The spec's create answers: started {deployment_id, pending: false, message, deployment}, queued {pending_request_id, pending: true, message}. */
export const createAnswerBody = (outcome: StartOutcome, options: { plan: boolean } = { plan: true }) =>
  outcome.kind === 'started'
    ? {
        deployment_id: outcome.deployment.id,
        pending: false,
        message: `Deployment started on ${outcome.deployment.instanceId ?? 'an orchestration instance (ended since)'}: ${outcome.deployment.totalSteps} step(s) on ${outcome.deployment.plan.targetCount} target(s).`,
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
  keyed?: KeyedRequest,
): Promise<StartOutcome> => {
  const before = keyed === undefined ? undefined : await madeBefore(deps, caller, keyed);
  if (before !== undefined) return before;
  const original = await visibleDeployment(deps, caller, id);
  const reuse = checkSecretReuse(caller, original, overrides);
  const command = mergeRedeploy(deps.plan.cipher, original, overrides, reuse);
  const resolved = await resolveChecked(deps, caller, command, original.id, {
    inherited: inheritedVariables(original, overrides),
  });
  const plan = resolved.draft.plan;
  const notes = [replannedNote(original, plan), ...(plan.warnings ?? [])];
  return startOnce(deps, caller, { ...resolved.draft, plan: { ...plan, warnings: notes } }, keyed);
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
