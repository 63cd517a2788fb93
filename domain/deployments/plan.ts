// From a create body to a DeploymentDraft (the plan), without side effects; the preview; the freeze check; the
// merge of a redeploy's overrides. Create, preview, redeploy and the dispatcher all resolve through here.
//
// resolveDeployment, step by step (each failure a 400 naming its field unless said otherwise):
//   1. tenancy: the deployment's tenant (a tenant-scoped caller's own; another answers 403 tenant_restriction)
//      and environment (visible, global or the tenant's; a tenant's environment without tenant_id brings its
//      tenant);
//   2. source: the solution, sequence or action, visible and usable by the deployment's tenant; a solution expands
//      to its sequences, a sequence to its steps, in their order; each action runs the newest version satisfying
//      its requirement (the step's, or the body's version_requirement for an action source; latest when none);
//   3. targets: target_ids (each visible, of the deployment's tenant and environment) and targets matching
//      target_tags (AND or OR), de-duplicated, by name then id; none at all is a 400;
//   4. variables: action defaults < body `variables` < `prompted_values`; a required one without a value is a
//      400; secret ones are encrypted wherever they are kept;
//   5. the plan: one step per target x sequence x action, target by target; the config with defaults; the
//      freezes in force and the warnings a preview shows.
import {
  findActionWithVersions,
  findSequence,
  findSolution,
  isVersionRange,
  isVisibleTo,
  pickVersion,
} from '../catalog/resolve.js';
import type { ActionRepository, SequenceRepository, SolutionRepository } from '../catalog/ports.js';
import type { ActionVersion, ActionWithVersions, Sequence, Solution } from '../catalog/types.js';
import { ValidationError, type FieldProblem } from '../errors.js';
import { isUserSession, mayOverrideFreeze, mayReuseSecretsOf } from '../identity/delegation.js';
import type { SecretCipher } from '../identity/ports.js';
import type { Caller } from '../identity/types.js';
import { variableNameProblem } from '../../protocol/environment-names.js';
import type { EnvironmentLookup, EnvironmentRef, TenantLookup, TenantRef } from '../shared/lookups.js';
import type { Clock } from '../shared/ports.js';
import type { TargetRepository } from '../targets/ports.js';
import { matchesTags, statusOf } from '../targets/targets.js';
import type { Tag, Target } from '../targets/types.js';
import { activeFreezes } from '../tenancy/freezes.js';
import type { FreezeRepository } from '../tenancy/ports.js';
import { tenantForNew } from '../tenancy/scope.js';
import type { Freeze } from '../tenancy/types.js';
import { DeploymentFrozenError, FREEZE_OVERRIDE_NEEDS, FreezeOverrideNotAllowedError, frozenBy } from './errors.js';
import type { Uuids } from './ports.js';
import type {
  DeploymentConfig,
  DeploymentDraft,
  FailureStrategy,
  FreezeOverride,
  PlanStep,
  PlanVariable,
  RollbackStrategy,
  SourceRef,
  SourceType,
  StepScript,
  TargetMode,
} from './types.js';
import { ENCRYPTED_PREFIX, isSecretVariable, planView } from './views.js';

/** The run fields of a step that has not started (a planned step, a rollback step). */
export const UNSTARTED = {
  state: 'pending',
  startedAt: null,
  completedAt: null,
  exitCode: null,
  errorMessage: null,
  retryCount: 0,
  durationMs: null,
} as const satisfies Partial<PlanStep>;

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

/** Defaults of the settings the body may omit (the spec gives none; docs/decisions.md). */
export const CONFIG_DEFAULTS = {
  targetMode: 'sequential',
  failureStrategy: 'stop_on_first_failure',
  rollbackStrategy: 'none',
  priority: 0,
  timeoutSeconds: 3600,
  maxRetries: 0,
  deploymentTimeoutSeconds: 0,
  targetTagsMatchAll: false,
} as const satisfies Partial<DeploymentConfig>;

/** The SecretCipher context of deployment variables. */
export const VARIABLE_CONTEXT = 'deployment-variable';

/** A secret value as stored: `enc:` + ciphertext. */
export const sealVariable = (cipher: SecretCipher, value: string): string =>
  `${ENCRYPTED_PREFIX}${cipher.encrypt(value, VARIABLE_CONTEXT)}`;

/**
 * The plain value of a stored variable: a secret one (the stored flag) is decrypted, any other is returned as given,
 * even when it starts with `enc:`.
 */
export const openVariable = (cipher: SecretCipher, stored: string, secret: boolean): string =>
  secret
    ? cipher.decrypt(
        stored.startsWith(ENCRYPTED_PREFIX) ? stored.slice(ENCRYPTED_PREFIX.length) : stored,
        VARIABLE_CONTEXT,
      )
    : stored;

const problem = (field: string, message: string): FieldProblem => ({ field, code: 'VALIDATION_ERROR', message });

const invalid = (problems: readonly FieldProblem[], message = 'The deployment is not valid.'): void => {
  if (problems.length > 0)
    throw new ValidationError(`${message} ${problems.map((p) => p.message).join(' ')}`, problems);
};

const fail = (field: string, message: string): never => {
  throw new ValidationError(message, [problem(field, message)]);
};

// ---- 1. tenancy ------------------------------------------------------------------------------------------------

interface Scope {
  readonly tenant: TenantRef | null;
  readonly environment: EnvironmentRef | null;
}

/**
 * The deployment's tenant and environment. Tenant: as tenancy/scope.ts `tenantForNew` decides (a tenant-scoped
 * caller's own, whether or not it sends tenant_id; a global caller's named tenant, or none). The environment must
 * exist and be visible to the caller, and be global or of the deployment's tenant; a global caller naming a
 * tenant's environment without tenant_id deploys in that tenant.
 */
const resolveScope = async (deps: PlanDeps, caller: Caller, command: CreateDeploymentCommand): Promise<Scope> => {
  let tenantId = await tenantForNew(deps, caller, command.tenant_id, 'deployments');
  let environment: EnvironmentRef | null = null;
  if (command.environment_id !== undefined && command.environment_id !== null) {
    const found = await deps.environments.findEnvironment(command.environment_id);
    environment =
      found !== undefined && isVisibleTo(caller.tenantId, found)
        ? found
        : fail('environment_id', `Environment '${command.environment_id}' does not exist.`);
    if (environment.tenantId !== null) {
      if (tenantId === null) tenantId = environment.tenantId;
      else if (environment.tenantId !== tenantId)
        fail('environment_id', `Environment '${environment.name}' belongs to another tenant than the deployment.`);
    }
  }
  if (tenantId === null) return { tenant: null, environment };
  const tenant: TenantRef =
    (await deps.tenants.findTenant(tenantId)) ??
    fail(command.tenant_id == null ? 'environment_id' : 'tenant_id', `Tenant '${tenantId}' does not exist.`);
  return { tenant, environment };
};

// ---- 2. source ---------------------------------------------------------------------------------------------------

/** One action of the plan, in its sequence (null for an action source). */
interface PlannedAction {
  readonly sequence: { readonly id: string; readonly name: string; readonly order: number } | null;
  readonly order: number;
  readonly action: ActionWithVersions['action'];
  readonly version: ActionVersion;
}

/** The most script text (UTF-8 bytes, every pinned script and rollback script) one plan holds: its item stays < 400 KB. */
export const PINNED_SCRIPTS_MAX_BYTES = 256 * 1024;

/** Each planned action version's script, rollback script, interpreter and timeout, pinned into the plan. */
const pinnedScripts = (actions: readonly PlannedAction[], sourceField: string): Record<string, StepScript> => {
  const scripts: Record<string, StepScript> = {};
  let bytes = 0;
  for (const { version } of actions) {
    if (Object.hasOwn(scripts, version.id)) continue;
    scripts[version.id] = {
      script: version.script,
      interpreter: version.interpreter,
      rollbackScript: version.rollbackScript,
      timeoutSeconds: version.timeoutSeconds,
    };
    bytes += utf8Bytes(version.script) + utf8Bytes(version.rollbackScript ?? '');
  }
  if (bytes > PINNED_SCRIPTS_MAX_BYTES) {
    throw ValidationError.field(
      sourceField,
      `The plan's scripts add up to ${Math.ceil(bytes / 1024)} KiB; at most ${PINNED_SCRIPTS_MAX_BYTES / 1024} KiB are pinned into one deployment. Split it.`,
    );
  }
  return scripts;
};

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

interface ResolvedSource {
  readonly sourceType: SourceType;
  readonly field: 'solution_id' | 'sequence_id' | 'action_id';
  readonly solution: SourceRef | null;
  readonly sequence: SourceRef | null;
  readonly action: SourceRef | null;
  /** In plan order: sequences in the solution's order, actions in the sequence's. */
  readonly actions: readonly PlannedAction[];
}

/** A catalog record the deployment may use: visible to the caller, and global or of the deployment's tenant. */
const usable = <R extends { readonly tenantId: string | null; readonly name?: string }>(
  record: R | undefined,
  caller: Caller,
  tenantId: string | null,
  field: string,
  what: string,
  id: string,
  problems: FieldProblem[],
): R | undefined => {
  if (record === undefined || !isVisibleTo(caller.tenantId, record)) {
    problems.push(problem(field, `${what} '${id}' does not exist.`));
    return undefined;
  }
  if (record.tenantId !== null && record.tenantId !== tenantId) {
    problems.push(
      problem(
        field,
        tenantId === null
          ? `${what} '${record.name ?? id}' belongs to a tenant: deploy it with that tenant's tenant_id and environment_id.`
          : `${what} '${record.name ?? id}' belongs to another tenant than the deployment.`,
      ),
    );
    return undefined;
  }
  return record;
};

/** The steps of a sequence, each with its action and chosen version; a problem on `field` per step that fails. */
const expandSequence = async (
  deps: PlanDeps,
  sequence: Sequence,
  order: number,
  field: string,
  problems: FieldProblem[],
): Promise<PlannedAction[]> => {
  const planned: PlannedAction[] = [];
  for (const step of sequence.steps) {
    const found = await findActionWithVersions(deps.actions, step.actionId);
    if (found === undefined) {
      problems.push(
        problem(field, `Step ${step.order} of sequence '${sequence.name}' uses an action that no longer exists.`),
      );
      continue;
    }
    const version = pickVersion(found.versions, step.versionRequirement);
    if (version === undefined) {
      problems.push(
        problem(
          field,
          `Step ${step.order} of sequence '${sequence.name}': no version of action '${found.action.name}' satisfies '${step.versionRequirement ?? ''}'.`,
        ),
      );
      continue;
    }
    planned.push({
      sequence: { id: sequence.id, name: sequence.name, order },
      order: step.order,
      action: found.action,
      version,
    });
  }
  return planned;
};

/** The source, or undefined with the reasons added to `problems`. */
const resolveSource = async (
  deps: PlanDeps,
  caller: Caller,
  tenantId: string | null,
  command: CreateDeploymentCommand,
  problems: FieldProblem[],
): Promise<ResolvedSource | undefined> => {
  const before = problems.length;
  const ref = (record: { id: string; name: string; version: string }): SourceRef => ({
    id: record.id,
    name: record.name,
    version: record.version,
  });
  let resolved: ResolvedSource | undefined;

  if (command.solution_id != null) {
    const id = command.solution_id;
    const solution = usable<Solution>(
      await findSolution(deps.solutions, id),
      caller,
      tenantId,
      'solution_id',
      'Solution',
      id,
      problems,
    );
    if (solution !== undefined) {
      const actions: PlannedAction[] = [];
      for (const entry of solution.sequences) {
        const sequence = await findSequence(deps.sequences, entry.sequenceId);
        if (sequence === undefined)
          problems.push(
            problem('solution_id', `Sequence ${entry.order} of solution '${solution.name}' no longer exists.`),
          );
        else actions.push(...(await expandSequence(deps, sequence, entry.order, 'solution_id', problems)));
      }
      resolved = {
        sourceType: 'solution',
        field: 'solution_id',
        solution: ref(solution),
        sequence: null,
        action: null,
        actions,
      };
    }
  } else if (command.sequence_id != null) {
    const id = command.sequence_id;
    const sequence = usable<Sequence>(
      await findSequence(deps.sequences, id),
      caller,
      tenantId,
      'sequence_id',
      'Sequence',
      id,
      problems,
    );
    if (sequence !== undefined) {
      const actions = await expandSequence(deps, sequence, 1, 'sequence_id', problems);
      resolved = {
        sourceType: 'sequence',
        field: 'sequence_id',
        solution: null,
        sequence: ref(sequence),
        action: null,
        actions,
      };
    }
  } else if (command.action_id != null) {
    const id = command.action_id;
    const found = await findActionWithVersions(deps.actions, id);
    const action = usable(found?.action, caller, tenantId, 'action_id', 'Action', id, problems);
    if (found !== undefined && action !== undefined) {
      const requirement = command.version_requirement ?? null;
      const version = pickVersion(found.versions, requirement);
      if (version === undefined) {
        problems.push(
          requirement !== null && !isVersionRange(requirement)
            ? problem('version_requirement', `'${requirement}' is not a version range (such as ^1.2, ~1.4.0 or 1.2.3).`)
            : problem(
                'version_requirement',
                `No version of action '${action.name}' satisfies '${requirement ?? ''}' (latest is ${action.latestVersion}).`,
              ),
        );
      } else {
        resolved = {
          sourceType: 'action',
          field: 'action_id',
          solution: null,
          sequence: null,
          action: { id: action.id, name: action.name, version: version.version },
          actions: [{ sequence: null, order: 1, action, version }],
        };
      }
    }
  } else {
    problems.push(
      ...['solution_id', 'sequence_id', 'action_id'].map((field) =>
        problem(field, 'Give exactly one of solution_id, sequence_id and action_id.'),
      ),
    );
  }
  return problems.length > before ? undefined : resolved;
};

// ---- 3. targets -------------------------------------------------------------------------------------------------

/** Targets are not shared between tenants: a tenant-scoped caller sees only its tenant's (targets.ts visibleTo). */
const targetVisible = (caller: Caller, target: Target): boolean =>
  caller.tenantId === null || target.tenantId === caller.tenantId;

/** Whether the target is in the deployment's scope: the same tenant (or both none), and the environment if one is set. */
const inScope = (target: Target, scope: Scope): boolean =>
  target.tenantId === (scope.tenant?.id ?? null) &&
  (scope.environment === null || target.environmentId === scope.environment.id);

const resolveTargets = async (
  deps: PlanDeps,
  caller: Caller,
  scope: Scope,
  command: CreateDeploymentCommand,
  problems: FieldProblem[],
): Promise<Target[]> => {
  const before = problems.length;
  const chosen = new Map<string, Target>();
  const ids = command.target_ids ?? [];
  for (const [index, id] of ids.entries()) {
    const field = `target_ids.${index}`;
    const target = await deps.targets.find(id);
    if (target === undefined || !targetVisible(caller, target))
      problems.push(problem(field, `Target '${id}' does not exist.`));
    else if (target.tenantId !== (scope.tenant?.id ?? null)) {
      problems.push(
        problem(
          field,
          scope.tenant === null
            ? `Target '${target.name}' belongs to a tenant: give that tenant's tenant_id.`
            : `Target '${target.name}' is not a target of tenant '${scope.tenant.name}'.`,
        ),
      );
    } else if (!inScope(target, scope))
      problems.push(
        problem(field, `Target '${target.name}' is not in environment '${scope.environment?.name ?? ''}'.`),
      );
    else chosen.set(target.id, target);
  }
  const tags = command.target_tags ?? [];
  if (tags.length > 0) {
    const all = command.target_tags_match_all ?? CONFIG_DEFAULTS.targetTagsMatchAll;
    for (const target of await deps.targets.listAll()) {
      if (targetVisible(caller, target) && inScope(target, scope) && matchesTags(target.tags, tags, all))
        chosen.set(target.id, target);
    }
  }
  const targets = [...chosen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  if (targets.length === 0 && problems.length === before) {
    const wanted = tags
      .map((t) => `${t.key}=${t.value}`)
      .join(command.target_tags_match_all === true ? ' and ' : ' or ');
    const where = [
      scope.tenant === null ? 'without a tenant' : `of tenant '${scope.tenant.name}'`,
      scope.environment === null ? '' : `in environment '${scope.environment.name}'`,
    ]
      .filter((s) => s !== '')
      .join(' ');
    problems.push(
      problem(
        tags.length > 0 ? 'target_tags' : 'target_ids',
        `No target matches: no target ${where} carries ${wanted || 'the tags'}.`,
      ),
    );
  }
  return targets;
};

// ---- 4. variables -----------------------------------------------------------------------------------------------
//
// Only variables the plan's action versions declare reach a command, and no name may change how a program starts
// (shared/environment-names.ts). Every key of `variables` and `prompted_values` is checked: a bad name or an
// undeclared one is a 400 on `variables.<NAME>` / `prompted_values.<NAME>`. A version stored before the rule that
// declares a bad name refuses the plan (400 on the source field). Lookups go through Maps: `valueOf` or
// `constructor` are ordinary names, never Object.prototype's.

interface Declared {
  required: boolean;
  secret: boolean;
  default: string | null;
  actions: string[];
}

/** Every variable the plan's action versions declare: required or secret if any declares it so; the first default wins. */
const declaredVariables = (
  actions: readonly PlannedAction[],
  field: string,
  problems: FieldProblem[],
): Map<string, Declared> => {
  const declared = new Map<string, Declared>();
  const seen = new Set<string>();
  for (const planned of actions) {
    if (seen.has(planned.version.id)) continue;
    seen.add(planned.version.id);
    for (const variable of planned.version.variables) {
      const bad = variableNameProblem(variable.name);
      if (bad !== undefined) {
        problems.push(
          problem(
            field,
            `Action '${planned.action.name}' ${planned.version.version} declares variable ${variable.name}, which is refused: ${bad} Fix the action version.`,
          ),
        );
        continue;
      }
      const entry = declared.get(variable.name) ?? { required: false, secret: false, default: null, actions: [] };
      entry.required ||= variable.required;
      entry.secret ||= variable.secret;
      entry.default ??= variable.default;
      if (!entry.actions.includes(planned.action.name)) entry.actions.push(planned.action.name);
      declared.set(variable.name, entry);
    }
  }
  return declared;
};

interface ResolvedVariables {
  readonly resolved: Record<string, PlanVariable>;
  readonly given: Record<string, string>;
  readonly prompted: Record<string, string>;
  readonly warnings: string[];
  /** A redeploy's inherited variables the new plan dropped: also kept in the plan's warnings. */
  readonly dropped: string[];
}

/** How resolveDeployment treats what a redeploy carried over from its original. */
export interface ResolveOptions {
  /**
   * Names in `variables` / `prompted_values` that come from the original deployment, not from the caller: when
   * the new plan no longer declares one (or its name is now refused), it is dropped with a warning instead of a 400.
   */
  readonly inherited?:
    { readonly variables: ReadonlySet<string>; readonly prompted_values: ReadonlySet<string> } | undefined;
}

export const undeclaredMessage = (name: string): string => `Variable ${name} is not declared by any action of the plan`;

/**
 * The variables the caller gave that may reach a command: problems for refused and undeclared names (inherited
 * ones dropped with a warning instead).
 */
const acceptedVariables = (
  map: Readonly<Record<string, string>> | undefined,
  field: 'variables' | 'prompted_values',
  declared: ReadonlyMap<string, Declared>,
  inherited: ReadonlySet<string>,
  problems: FieldProblem[],
  dropped: string[],
): Map<string, string> => {
  const accepted = new Map<string, string>();
  for (const [name, value] of Object.entries(map ?? {})) {
    const bad = variableNameProblem(name);
    if (inherited.has(name) && (bad !== undefined || !declared.has(name))) {
      dropped.push(
        `Variable ${name} of the original deployment is dropped: ${bad ?? 'the new plan does not declare it.'}`,
      );
    } else if (bad !== undefined) problems.push(problem(`${field}.${name}`, bad));
    else if (!declared.has(name)) problems.push(problem(`${field}.${name}`, undeclaredMessage(name)));
    else accepted.set(name, value);
  }
  return accepted;
};

const resolveVariables = (
  deps: PlanDeps,
  source: Pick<ResolvedSource, 'actions' | 'field'>,
  command: CreateDeploymentCommand,
  options: ResolveOptions,
): ResolvedVariables => {
  const problems: FieldProblem[] = [];
  const warnings: string[] = [];
  const dropped: string[] = [];
  const declared = declaredVariables(source.actions, source.field, problems);
  const none = new Set<string>();
  const given = acceptedVariables(
    command.variables,
    'variables',
    declared,
    options.inherited?.variables ?? none,
    problems,
    dropped,
  );
  const prompted = acceptedVariables(
    command.prompted_values,
    'prompted_values',
    declared,
    options.inherited?.prompted_values ?? none,
    problems,
    dropped,
  );
  invalid(problems, 'The variables are not valid.');
  const resolved: Record<string, PlanVariable> = {};
  const seal = (name: string, value: string) =>
    declared.get(name)?.secret === true ? sealVariable(deps.cipher, value) : value;
  for (const [name, declaration] of declared) {
    const value = prompted.get(name) ?? given.get(name) ?? declaration.default ?? undefined;
    if (value === undefined) {
      const by = declaration.actions.map((a) => `'${a}'`).join(', ');
      if (declaration.required)
        problems.push(problem(`variables.${name}`, `Variable ${name} is required by ${by} and has no value.`));
      else warnings.push(`Variable ${name} (${by}) has no value: its scripts see it unset.`);
      continue;
    }
    resolved[name] = { value: seal(name, value), secret: declaration.secret };
  }
  invalid(problems, 'Required variables have no value.');
  const sealAll = (map: ReadonlyMap<string, string>) =>
    Object.fromEntries([...map].map(([name, value]) => [name, seal(name, value)]));
  return { resolved, given: sealAll(given), prompted: sealAll(prompted), warnings, dropped };
};

// ---- 5. the draft -----------------------------------------------------------------------------------------------

const ago = (from: string, now: Date): string => {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(from)) / 1000));
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} days ago`;
};

const targetWarnings = (targets: readonly Target[], now: Date): { summary: TargetSummary; warnings: string[] } => {
  const counts = { online: 0, offline: 0, stale: 0 };
  const warnings: string[] = [];
  for (const target of targets) {
    const status = statusOf(target, now);
    counts[status] += 1;
    if (target.lastHeartbeatAt === null) warnings.push(`Target '${target.name}' is offline: no agent ever connected.`);
    else if (status !== 'online')
      warnings.push(
        `Target '${target.name}' is ${status}: its agent was last seen ${ago(target.lastHeartbeatAt, now)} (${target.lastHeartbeatAt}).`,
      );
  }
  return { summary: { total: targets.length, ...counts }, warnings };
};

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
  const problems: FieldProblem[] = [];
  const source = await resolveSource(deps, caller, tenantId, command, problems);
  const targets = await resolveTargets(deps, caller, scope, command, problems);
  invalid(problems);
  const resolvedSource = source as ResolvedSource; // no problem: resolved
  const variables = resolveVariables(deps, resolvedSource, command, options);

  const steps: PlanStep[] = targets.flatMap((target) =>
    resolvedSource.actions.map((planned): PlanStep => ({
      id: deps.uuids.uuid(),
      targetId: target.id,
      targetName: target.name,
      sequenceId: planned.sequence?.id ?? null,
      sequenceName: planned.sequence?.name ?? null,
      sequenceOrder: planned.sequence?.order ?? 1,
      actionId: planned.action.id,
      actionName: planned.action.name,
      actionSlug: planned.action.slug,
      actionOrder: planned.order,
      actionVersion: planned.version.version,
      actionVersionId: planned.version.id,
      ...UNSTARTED,
    })),
  );

  const config: DeploymentConfig = {
    targetMode: command.target_mode ?? CONFIG_DEFAULTS.targetMode,
    failureStrategy: command.failure_strategy ?? CONFIG_DEFAULTS.failureStrategy,
    rollbackStrategy: command.rollback_strategy ?? CONFIG_DEFAULTS.rollbackStrategy,
    priority: command.priority ?? CONFIG_DEFAULTS.priority,
    timeoutSeconds: command.timeout_seconds ?? CONFIG_DEFAULTS.timeoutSeconds,
    maxRetries: command.max_retries ?? CONFIG_DEFAULTS.maxRetries,
    deploymentTimeoutSeconds: command.deployment_timeout_seconds ?? CONFIG_DEFAULTS.deploymentTimeoutSeconds,
    targetIds: [...(command.target_ids ?? [])],
    targetTags: (command.target_tags ?? []).map((t) => ({ key: t.key, value: t.value })),
    targetTagsMatchAll: command.target_tags_match_all ?? CONFIG_DEFAULTS.targetTagsMatchAll,
    variables: variables.given,
    promptedValues: variables.prompted,
    versionRequirement: command.version_requirement ?? null,
    tenantId,
    environmentId: scope.environment?.id ?? null,
    bypassCache: command.bypass_cache ?? false,
  };

  const scripts = pinnedScripts(resolvedSource.actions, `${resolvedSource.sourceType}_id`);
  const draft: DeploymentDraft = {
    sourceType: resolvedSource.sourceType,
    solution: resolvedSource.solution,
    sequence: resolvedSource.sequence,
    action: resolvedSource.action,
    tenantId,
    tenantName: scope.tenant?.name ?? null,
    environmentId: scope.environment?.id ?? null,
    environmentName: scope.environment?.name ?? null,
    triggeredBy: caller.userId,
    ...(caller.userName === undefined ? {} : { triggeredByName: caller.userName }),
    config,
    plan: {
      targetCount: targets.length,
      steps,
      resolvedVariables: variables.resolved,
      ...(variables.dropped.length === 0 ? {} : { warnings: variables.dropped }),
      scripts,
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
    environmentId: scope.environment?.id ?? null,
    at: now,
  });
  const { summary, warnings: targetNotes } = targetWarnings(targets, now);
  const warnings = [
    ...targetNotes,
    ...freezes.map(
      (f) => `Deployments are frozen by '${f.name}' until ${f.endTime}${f.reason === null ? '' : ` (${f.reason})`}.`,
    ),
    ...(command.override_freeze === true && !mayOverrideFreeze(caller)
      ? [`${FREEZE_OVERRIDE_NEEDS}: creating this deployment would answer 403.`]
      : []),
    ...(command.override_freeze === true && mayOverrideFreeze(caller) && freezes.length === 0
      ? ['override_freeze is set, but no freeze is in force.']
      : []),
    ...(resolvedSource.sourceType !== 'action' && command.version_requirement != null
      ? [`version_requirement is ignored for a ${resolvedSource.sourceType}: each step uses its own requirement.`]
      : []),
    ...variables.dropped,
    ...variables.warnings,
    ...(typeof config.targetMode === 'object' &&
    config.targetMode.rolling.batch_size >= targets.length &&
    targets.length > 1
      ? [
          `The rolling batch size (${config.targetMode.rolling.batch_size}) covers all ${targets.length} targets at once.`,
        ]
      : []),
  ];
  return { draft, warnings, targetSummary: summary, activeFreezes: freezes };
};

/**
 * Whether the deployment may start despite active freezes. `override_freeze` by a caller who may not override
 * (mayOverrideFreeze: an admin session, or an admin's credential scoped to freezes:update) is 403
 * INSUFFICIENT_PERMISSIONS (whether or not a freeze is in force). No freeze: null. Freezes and no override: 409
 * DEPLOYMENT_FROZEN (can_override: the caller may override). An allowed override with a reason: the record to keep.
 */
export const checkFreezes = (
  resolved: Pick<ResolvedDeployment, 'activeFreezes'>,
  caller: Caller,
  command: Pick<CreateDeploymentCommand, 'override_freeze' | 'override_reason'>,
): FreezeOverride | null => {
  const admin = mayOverrideFreeze(caller);
  if (command.override_freeze === true && !admin) throw new FreezeOverrideNotAllowedError(!isUserSession(caller));
  const freezes = resolved.activeFreezes;
  if (freezes.length === 0) return null;
  if (command.override_freeze !== true) throw new DeploymentFrozenError(freezes, admin);
  const reason = command.override_reason?.trim() ?? '';
  if (reason === '')
    throw new ValidationError('override_reason is required when override_freeze is true.', [
      {
        field: 'override_reason',
        code: 'MISSING_FIELD',
        message: 'override_reason is required when override_freeze is true.',
      },
    ]);
  return { reason, by: caller.userId, freezes: freezes.map(frozenBy) };
};

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

export const secretReuseMessage = (name: string): string =>
  `Secret variable ${name} must be given again: only the original triggerer, or an admin signed in as a user (not with an API key, OAuth token or trigger), may reuse it`;

/**
 * A redeploy reuses no secret value unless mayReuseSecretsOf (the original triggerer with any credential, or a user
 * session with the admin role): each secret variable that had a value must be given again (`variables` or
 * `prompted_values`), else a 400 with one field per missing one. Whether the original's secrets may be reused.
 */
export const checkSecretReuse = (
  caller: Caller,
  original: Pick<DeploymentDraft, 'triggeredBy'> & {
    readonly plan: Pick<DeploymentDraft['plan'], 'resolvedVariables'>;
  },
  overrides: Pick<RedeployOverrides, 'variables' | 'prompted_values'>,
): { readonly reuseSecrets: boolean } => {
  if (mayReuseSecretsOf(caller, original.triggeredBy)) return { reuseSecrets: true };
  const given = (name: string) =>
    Object.hasOwn(overrides.variables ?? {}, name) || Object.hasOwn(overrides.prompted_values ?? {}, name);
  const missing = Object.entries(original.plan.resolvedVariables)
    .filter(([name, v]) => v.secret && !given(name))
    .map(([name]) => name);
  invalid(
    missing.map((name) => problem(`variables.${name}`, secretReuseMessage(name))),
    'Secret variables must be given again.',
  );
  return { reuseSecrets: false };
};

/**
 * The names of `variables` and `prompted_values` a merged redeploy carries over from the original without the
 * caller giving them again: resolveDeployment drops those the new plan no longer declares (with a warning).
 */
export const inheritedVariables = (
  original: Pick<DeploymentDraft, 'config'>,
  overrides: Pick<RedeployOverrides, 'variables' | 'prompted_values'>,
): NonNullable<ResolveOptions['inherited']> => {
  const carried = (stored: Readonly<Record<string, string>>, given: Readonly<Record<string, string>> | undefined) =>
    new Set(Object.keys(stored).filter((name) => given === undefined || !Object.hasOwn(given, name)));
  return {
    variables: carried(original.config.variables, overrides.variables),
    prompted_values: carried(original.config.promptedValues, overrides.prompted_values),
  };
};

/**
 * The create command a redeploy resolves: the original's source and configuration, with the overrides applied.
 * `variables` and `prompted_values` are merged (the original's, decrypted, then the given ones); every other given
 * field replaces the original's. target_ids / target_tags replace the whole target selection (giving only one
 * clears the other). The freeze override is never copied: a redeploy states its own. The version requirement is
 * the original's, so `^1.2` may pick a newer version than the original ran.
 */
export const mergeRedeploy = (
  cipher: SecretCipher,
  original: Pick<DeploymentDraft, 'sourceType' | 'solution' | 'sequence' | 'action' | 'config'> & {
    readonly plan: Pick<DeploymentDraft['plan'], 'resolvedVariables'>;
  },
  overrides: RedeployOverrides,
  options: { readonly reuseSecrets: boolean } = { reuseSecrets: true },
): CreateDeploymentCommand => {
  const c = original.config;
  const secret = (name: string) => isSecretVariable(original.plan, name);
  const open = (map: Readonly<Record<string, string>>) =>
    Object.fromEntries(
      Object.entries(map)
        .filter(([name]) => options.reuseSecrets || !secret(name))
        .map(([name, value]) => [name, openVariable(cipher, value, secret(name))]),
    );
  const retarget = overrides.target_ids !== undefined || overrides.target_tags !== undefined;
  return {
    solution_id: original.sourceType === 'solution' ? (original.solution?.id ?? null) : null,
    sequence_id: original.sourceType === 'sequence' ? (original.sequence?.id ?? null) : null,
    action_id: original.sourceType === 'action' ? (original.action?.id ?? null) : null,
    version_requirement: c.versionRequirement,
    target_ids: retarget ? [...(overrides.target_ids ?? [])] : [...c.targetIds],
    target_tags: retarget ? [...(overrides.target_tags ?? [])] : [...c.targetTags],
    target_tags_match_all: c.targetTagsMatchAll,
    target_mode: overrides.target_mode ?? c.targetMode,
    failure_strategy: overrides.failure_strategy ?? c.failureStrategy,
    rollback_strategy: overrides.rollback_strategy ?? c.rollbackStrategy,
    priority: overrides.priority ?? c.priority,
    timeout_seconds: overrides.timeout_seconds ?? c.timeoutSeconds,
    max_retries: overrides.max_retries ?? c.maxRetries,
    deployment_timeout_seconds: c.deploymentTimeoutSeconds,
    variables: { ...open(c.variables), ...(overrides.variables ?? {}) },
    prompted_values: { ...open(c.promptedValues), ...(overrides.prompted_values ?? {}) },
    tenant_id: c.tenantId,
    environment_id: overrides.environment_id ?? c.environmentId,
    bypass_cache: overrides.bypass_cache ?? c.bypassCache,
    dry_run: false,
    override_freeze: overrides.override_freeze ?? false,
    override_reason: overrides.override_reason ?? null,
  };
};
