// Actions and their versions (api.md "Actions"). An action's slug is unique within its scope (its tenant, or
// the global catalog); only name and description change after creation. Versions are semantic versions, unique
// per action; the last one cannot be deleted (400), and neither can one a sequence needs as its only satisfying
// version (409). Deleting an action deletes its versions, unless a sequence uses it (409).
//
// Limits: a script and a rollback script hold at most 64 KiB (UTF-8) each, and all versions of one action at most
// 4 MiB as the API shows them, so an action's detail always fits one response (Lambda's limit is 6 MB).
import { ConflictError, NotFoundError, ValidationError, type FieldProblem } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { variableNameProblem } from '../../protocol/environment-names.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import { assertCanChange, listedFor, ownerTenant, retrying, type CatalogDeps } from './deps.js';
import { findActionWithVersions, isVisibleTo, newestFirst, normalizeVersion, pickVersion } from './resolve.js';
import type { Action, ActionVariable, ActionVersion, ActionWithVersions, Interpreter } from './types.js';
import { actionDetail, actionView, versionView } from './views.js';

export const MAX_SCRIPT_BYTES = 64 * 1024;
export const MAX_ACTION_BYTES = 4 * 1024 * 1024;

export interface VariableInput {
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly required?: boolean | undefined;
  readonly default?: string | null | undefined;
  readonly secret?: boolean | undefined;
}

/** CreateActionVersionRequest. */
export interface NewVersionInput {
  readonly version: string;
  readonly script: string;
  readonly interpreter?: Interpreter | undefined;
  readonly rollback_script?: string | null | undefined;
  readonly timeout_seconds?: number | null | undefined;
  readonly variables?: readonly VariableInput[] | undefined;
  readonly changelog?: string | null | undefined;
}

/** UpdateActionVersionRequest: the given fields replace the version's (null clears a nullable one). */
export type VersionPatch = Partial<NewVersionInput>;

export interface CreateActionCommand {
  readonly slug: string;
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly tenant_id?: string | null | undefined;
  readonly version: NewVersionInput;
}

export interface UpdateActionCommand {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
}

export interface ListActionsQuery extends PageRequest {
  readonly tenant_id?: string | undefined;
}

const encoder = new TextEncoder();
const bytes = (text: string): number => encoder.encode(text).length;
/** What a version adds to its action's detail response. */
const weight = (version: ActionVersion): number => bytes(JSON.stringify(versionView(version)));

const versionNumber = (text: string, field: string): string => {
  const version = normalizeVersion(text);
  if (version === undefined)
    throw ValidationError.field(field, `'${text}' is not a semantic version (for example 1.2.0).`);
  return version;
};

const variablesOf = (inputs: readonly VariableInput[] | undefined): ActionVariable[] =>
  (inputs ?? []).map((v) => ({
    name: v.name,
    description: v.description ?? null,
    required: v.required ?? false,
    default: v.default ?? null,
    secret: v.secret ?? false,
  }));

/** The rules valibot cannot see: sizes in bytes, unique variable names, no stored secrets. */
const checkVersion = (version: ActionVersion, prefix: string): void => {
  const problem = (field: string, message: string): FieldProblem => ({
    field: `${prefix}${field}`,
    code: 'VALIDATION_ERROR',
    message,
  });
  const problems: FieldProblem[] = [];
  if (version.script.trim() === '') problems.push(problem('script', 'The script must not be empty.'));
  if (bytes(version.script) > MAX_SCRIPT_BYTES) problems.push(problem('script', 'A script holds at most 64 KiB.'));
  if (version.rollbackScript !== null && bytes(version.rollbackScript) > MAX_SCRIPT_BYTES)
    problems.push(problem('rollback_script', 'A rollback script holds at most 64 KiB.'));
  const timeout = version.timeoutSeconds;
  if (timeout !== null && (!Number.isInteger(timeout) || timeout < 1 || timeout > 86_400))
    problems.push(problem('timeout_seconds', 'Must be an integer from 1 to 86400.'));
  version.variables.forEach((variable, index) => {
    const nameProblem = variableNameProblem(variable.name);
    if (nameProblem !== undefined) problems.push(problem(`variables.${index}.name`, nameProblem));
    else if (version.variables.findIndex((other) => other.name === variable.name) !== index)
      problems.push(problem(`variables.${index}.name`, `Variable ${variable.name} is declared twice.`));
    if (variable.secret && variable.default !== null)
      problems.push(
        problem(
          `variables.${index}.default`,
          'A secret variable cannot have a stored default: give its value when deploying.',
        ),
      );
  });
  if (problems.length > 0) throw new ValidationError('Invalid action version.', problems);
};

const checkBudget = (versions: readonly ActionVersion[], field: string): void => {
  const total = versions.reduce((sum, v) => sum + weight(v), 0);
  if (total > MAX_ACTION_BYTES) {
    throw ValidationError.field(
      field,
      `The versions of one action hold at most 4 MiB together (this would make ${(total / 1024 / 1024).toFixed(1)} MiB): delete old versions first.`,
    );
  }
};

/** The action's derived fields once its versions are `versions`. */
const withVersions = (action: Action, versions: readonly ActionVersion[], now: string): Action => ({
  ...action,
  latestVersion: (newestFirst(versions)[0] as ActionVersion).version,
  versionCount: versions.length,
  revision: action.revision + 1,
  updatedAt: now,
});

const findVisible = async (deps: CatalogDeps, caller: Caller, id: string): Promise<ActionWithVersions> => {
  const found = await findActionWithVersions(deps.actions, id);
  if (found === undefined || !isVisibleTo(caller.tenantId, found.action)) throw new NotFoundError('Action', id);
  return found;
};

const findVersion = (found: ActionWithVersions, text: string): ActionVersion => {
  const number = normalizeVersion(text);
  const version = found.versions.find((v) => v.version === number);
  if (version === undefined) throw new NotFoundError('Action version', `${found.action.slug}@${text}`);
  return version;
};

const taken = (found: ActionWithVersions, version: string): ConflictError =>
  new ConflictError(`Version ${version} of action '${found.action.slug}' already exists.`, { field: 'version' });

/** 409 when removing `removed` (leaving `remaining`) would leave a sequence step with no satisfying version. */
const checkStillSatisfied = async (
  deps: CatalogDeps,
  action: Action,
  removed: ActionVersion,
  remaining: readonly ActionVersion[],
): Promise<void> => {
  const broken = (await deps.sequences.listUsingAction(action.id)).flatMap((sequence) =>
    sequence.steps
      .filter((step) => step.actionId === action.id && pickVersion(remaining, step.versionRequirement) === undefined)
      .map((step) => ({
        sequence_id: sequence.id,
        sequence_name: sequence.name,
        order: step.order,
        version_requirement: step.versionRequirement,
      })),
  );
  const first = broken[0];
  if (first !== undefined) {
    throw new ConflictError(
      `Sequence '${first.sequence_name}' (step ${first.order}) needs version ${removed.version} of '${action.slug}': no other version satisfies '${first.version_requirement}'.`,
      { steps: broken },
    );
  }
};

const newVersion = async (
  deps: CatalogDeps,
  caller: Caller,
  actionId: string,
  input: NewVersionInput,
  number: string,
  now: string,
): Promise<ActionVersion> => ({
  id: (await deps.ids.next('action_version')).id,
  actionId,
  version: number,
  script: input.script,
  interpreter: input.interpreter ?? 'sh',
  rollbackScript: input.rollback_script ?? null,
  timeoutSeconds: input.timeout_seconds ?? null,
  variables: variablesOf(input.variables),
  changelog: input.changelog ?? null,
  createdAt: now,
  createdBy: caller.userId,
});

export const listActions = async (deps: CatalogDeps, caller: Caller, query: ListActionsQuery) => {
  const actions = (await deps.actions.listAll()).filter(listedFor(caller, query.tenant_id));
  const page = pageOf(actions, query);
  return { data: page.data.map(actionView), meta: page.meta };
};

export const createAction = async (deps: CatalogDeps, caller: Caller, command: CreateActionCommand) => {
  const tenantId = await ownerTenant(deps, caller, command.tenant_id, 'action');
  const number = versionNumber(command.version.version, 'version.version');
  const { id, shortId } = await deps.ids.next('action');
  const now = deps.clock.now().toISOString();
  const version = await newVersion(deps, caller, id, command.version, number, now);
  checkVersion(version, 'version.');
  checkBudget([version], 'version.script');
  const action: Action = {
    id,
    shortId,
    slug: command.slug.toLowerCase(),
    name: command.name,
    description: command.description ?? null,
    tenantId,
    latestVersion: number,
    versionCount: 1,
    revision: 1,
    refCount: 0,
    createdAt: now,
    updatedAt: now,
  };
  await deps.actions.create(action, version);
  return actionDetail(action, [version]);
};

export const getAction = async (deps: CatalogDeps, caller: Caller, id: string) => {
  const found = await findVisible(deps, caller, id);
  return actionDetail(found.action, found.versions);
};

export const updateAction = async (deps: CatalogDeps, caller: Caller, id: string, command: UpdateActionCommand) => {
  const found = await findVisible(deps, caller, id);
  assertCanChange(caller, found.action, 'action');
  const renamed = await deps.actions.rename(found.action, {
    name: command.name ?? found.action.name,
    description: command.description === undefined ? found.action.description : command.description,
    updatedAt: deps.clock.now().toISOString(),
  });
  return actionDetail(renamed, found.versions);
};

export const deleteAction = async (deps: CatalogDeps, caller: Caller, id: string): Promise<void> =>
  retrying(async () => {
    const found = await findVisible(deps, caller, id);
    assertCanChange(caller, found.action, 'action');
    if (found.action.refCount > 0) {
      const users = await deps.sequences.listUsingAction(found.action.id);
      throw new ConflictError(
        `Action '${found.action.slug}' is used by ${users.length || found.action.refCount} sequence(s): remove it from them first.`,
        {
          sequences: users.map((s) => ({ id: s.id, name: s.name })),
        },
      );
    }
    await deps.actions.delete(found.action, found.versions);
  });

export const listVersions = async (deps: CatalogDeps, caller: Caller, id: string) =>
  (await findVisible(deps, caller, id)).versions.map(versionView);

export const getVersion = async (deps: CatalogDeps, caller: Caller, id: string, version: string) =>
  versionView(findVersion(await findVisible(deps, caller, id), version));

export const createVersion = async (deps: CatalogDeps, caller: Caller, id: string, input: NewVersionInput) =>
  retrying(async () => {
    const found = await findVisible(deps, caller, id);
    assertCanChange(caller, found.action, 'action');
    const number = versionNumber(input.version, 'version');
    if (found.versions.some((v) => v.version === number)) throw taken(found, number);
    const now = deps.clock.now().toISOString();
    const version = await newVersion(deps, caller, found.action.id, input, number, now);
    checkVersion(version, '');
    const versions = [...found.versions, version];
    checkBudget(versions, 'script');
    await deps.actions.changeVersions(found.action, withVersions(found.action, versions, now), {
      kind: 'create',
      version,
    });
    return versionView(version);
  });

export const updateVersion = async (
  deps: CatalogDeps,
  caller: Caller,
  id: string,
  versionText: string,
  patch: VersionPatch,
) =>
  retrying(async () => {
    const found = await findVisible(deps, caller, id);
    assertCanChange(caller, found.action, 'action');
    const current = findVersion(found, versionText);
    const number = patch.version === undefined ? current.version : versionNumber(patch.version, 'version');
    if (number !== current.version && found.versions.some((v) => v.version === number)) throw taken(found, number);
    const next: ActionVersion = {
      ...current,
      version: number,
      script: patch.script ?? current.script,
      interpreter: patch.interpreter ?? current.interpreter,
      rollbackScript: patch.rollback_script === undefined ? current.rollbackScript : patch.rollback_script,
      timeoutSeconds: patch.timeout_seconds === undefined ? current.timeoutSeconds : patch.timeout_seconds,
      variables: patch.variables === undefined ? current.variables : variablesOf(patch.variables),
      changelog: patch.changelog === undefined ? current.changelog : patch.changelog,
    };
    checkVersion(next, '');
    const versions = [...found.versions.filter((v) => v !== current), next];
    checkBudget(versions, 'script');
    if (number !== current.version) await checkStillSatisfied(deps, found.action, current, versions);
    const now = deps.clock.now().toISOString();
    await deps.actions.changeVersions(found.action, withVersions(found.action, versions, now), {
      kind: 'replace',
      previous: current,
      next,
    });
    return versionView(next);
  });

export const deleteVersion = async (
  deps: CatalogDeps,
  caller: Caller,
  id: string,
  versionText: string,
): Promise<void> =>
  retrying(async () => {
    const found = await findVisible(deps, caller, id);
    assertCanChange(caller, found.action, 'action');
    const current = findVersion(found, versionText);
    if (found.versions.length === 1) {
      throw ValidationError.field(
        'version',
        `${current.version} is the last version of action '${found.action.slug}': an action keeps at least one version (delete the action instead).`,
      );
    }
    const remaining = found.versions.filter((v) => v !== current);
    await checkStillSatisfied(deps, found.action, current, remaining);
    await deps.actions.changeVersions(
      found.action,
      withVersions(found.action, remaining, deps.clock.now().toISOString()),
      { kind: 'delete', version: current },
    );
  });
