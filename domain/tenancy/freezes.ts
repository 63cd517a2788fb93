// Deployment freezes: windows [start_time, end_time) in which deployments matching the freeze's scope must not
// start. Each scope field (tenant, solution, environment) is optional; a null field matches everything, so a
// freeze without any is global. Tenant scoping as in scope.ts: tenant-scoped callers see their tenant's freezes
// and global ones, and create and change only their tenant's. Referenced records must exist and be visible to the
// caller, and must not belong to a tenant other than the freeze's (400 naming the field); a freeze naming a
// tenant's environment or solution without a tenant_id takes that tenant.
import { NotFoundError, ValidationError, type FieldProblem } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import { parseDateTime } from './date-time.js';
import type { TenancyDeps } from './deps.js';
import type { FreezeRepository } from './ports.js';
import { assertWritable, tenantForNew, visibleTo } from './scope.js';
import type { Freeze } from './types.js';

type Deps = Pick<TenancyDeps, 'tenants' | 'environments' | 'solutions' | 'freezes' | 'ids' | 'clock'>;

/** What a deployment is about, as freezes match it (UUIDs; null when the deployment has none). */
export interface FreezeScope {
  readonly tenantId: string | null;
  readonly solutionId: string | null;
  readonly environmentId: string | null;
}

const matches = (field: string | null, value: string | null): boolean =>
  field === null || (value !== null && field.toLowerCase() === value.toLowerCase());

/** Whether `freeze` is in force at `at` (start inclusive, end exclusive). */
export const isActiveAt = (freeze: Freeze, at: Date): boolean =>
  Date.parse(freeze.startTime) <= at.getTime() && at.getTime() < Date.parse(freeze.endTime);

/** Whether `freeze` stops a deployment with this scope at `at`: active, and each of its non-null scope fields matches. */
export const freezeApplies = (freeze: Freeze, scope: FreezeScope, at: Date): boolean =>
  isActiveAt(freeze, at) &&
  matches(freeze.tenantId, scope.tenantId) &&
  matches(freeze.solutionId, scope.solutionId) &&
  matches(freeze.environmentId, scope.environmentId);

/**
 * The freezes that stop a deployment with this scope at `at`, the one ending last first. Called by deployment
 * creation; an empty answer means the deployment may start.
 */
export const activeFreezes = async (
  deps: { readonly freezes: Pick<FreezeRepository, 'listEndingAfter'> },
  query: FreezeScope & { readonly at: Date },
): Promise<readonly Freeze[]> =>
  (await deps.freezes.listEndingAfter(query.at))
    .filter((freeze) => freezeApplies(freeze, query, query.at))
    .sort((a, b) => b.endTime.localeCompare(a.endTime) || a.id.localeCompare(b.id));

export const freezeView = (freeze: Freeze, now: Date) => ({
  id: freeze.id,
  short_id: freeze.shortId,
  name: freeze.name,
  reason: freeze.reason,
  start_time: freeze.startTime,
  end_time: freeze.endTime,
  tenant_id: freeze.tenantId,
  solution_id: freeze.solutionId,
  environment_id: freeze.environmentId,
  /** Whether the window contains the time of the answer. */
  active: isActiveAt(freeze, now),
  created_by: freeze.createdBy,
  created_at: freeze.createdAt,
  updated_at: freeze.updatedAt,
});

const findVisible = async (deps: Pick<Deps, 'freezes'>, caller: Caller, id: string): Promise<Freeze> => {
  const freeze = await deps.freezes.get(id);
  if (freeze === undefined || !visibleTo(caller, freeze)) throw new NotFoundError('Deployment freeze', id);
  return freeze;
};

export interface ListFreezesQuery extends PageRequest {
  /** true: only freezes active now; false: only the others. */
  readonly active?: boolean | undefined;
  /** Global callers only: exact match (global freezes are not included). */
  readonly tenant_id?: string | undefined;
  /** Exact match. */
  readonly environment_id?: string | undefined;
}

/** Newest first: by start_time, then created_at, descending. */
export const listFreezes = async (deps: Pick<Deps, 'freezes' | 'clock'>, caller: Caller, query: ListFreezesQuery) => {
  const now = deps.clock.now();
  const freezes = (await deps.freezes.listAll())
    .filter((f) => visibleTo(caller, f))
    .filter((f) => query.active === undefined || isActiveAt(f, now) === query.active)
    .filter(
      (f) => caller.tenantId !== null || query.tenant_id === undefined || f.tenantId === query.tenant_id.toLowerCase(),
    )
    .filter((f) => query.environment_id === undefined || f.environmentId === query.environment_id.toLowerCase())
    .sort(
      (a, b) =>
        b.startTime.localeCompare(a.startTime) || b.createdAt.localeCompare(a.createdAt) || a.id.localeCompare(b.id),
    );
  const page = pageOf(freezes, query);
  return { data: page.data.map((f) => freezeView(f, now)), meta: page.meta };
};

export const getFreeze = async (deps: Pick<Deps, 'freezes' | 'clock'>, caller: Caller, id: string) =>
  freezeView(await findVisible(deps, caller, id), deps.clock.now());

const problem = (field: string, message: string): FieldProblem => ({ field, code: 'VALIDATION_ERROR', message });

/** Normalised UTC start and end, with a problem per bad field (end must be after start). */
const window = (
  startTime: string,
  endTime: string,
  problems: FieldProblem[],
): { startTime: string; endTime: string } => {
  const start = parseDateTime(startTime);
  const end = parseDateTime(endTime);
  const format = 'must be an ISO 8601 date-time with an offset, such as 2026-03-01T18:00:00Z';
  if (start === undefined) problems.push(problem('start_time', format));
  if (end === undefined) problems.push(problem('end_time', format));
  else if (start !== undefined && end.getTime() <= start.getTime())
    problems.push(problem('end_time', 'must be after start_time'));
  return { startTime: start?.toISOString() ?? startTime, endTime: end?.toISOString() ?? endTime };
};

/**
 * The scope resolved to UUIDs. The solution and environment must exist and be visible to the caller. A freeze
 * naming a tenant's solution or environment belongs to that tenant (so only that tenant and global callers see
 * it); both must fit the freeze's tenant.
 */
const resolveScope = async (
  deps: Pick<Deps, 'environments' | 'solutions'>,
  caller: Caller,
  requested: FreezeScope,
  problems: FieldProblem[],
): Promise<FreezeScope> => {
  const find = async (
    field: string,
    id: string | null,
    lookup: (id: string) => Promise<{ id: string; tenantId: string | null } | undefined>,
  ) => {
    if (id === null) return undefined;
    const found = await lookup(id);
    if (found !== undefined && visibleTo(caller, found)) return found;
    problems.push(problem(field, `'${id}' does not exist.`));
    return undefined;
  };
  const solution = await find('solution_id', requested.solutionId, (id) => deps.solutions.findSolution(id));
  const environment = await find('environment_id', requested.environmentId, (id) =>
    deps.environments.findEnvironment(id),
  );
  const tenantId = requested.tenantId ?? environment?.tenantId ?? solution?.tenantId ?? null;
  const fits = (field: string, found: { tenantId: string | null } | undefined) => {
    if (found !== undefined && found.tenantId !== null && found.tenantId !== tenantId)
      problems.push(problem(field, 'belongs to another tenant than the freeze'));
  };
  fits('solution_id', solution);
  fits('environment_id', environment);
  return {
    tenantId,
    solutionId: solution?.id ?? requested.solutionId,
    environmentId: environment?.id ?? requested.environmentId,
  };
};

const invalid = (problems: readonly FieldProblem[]): void => {
  if (problems.length > 0) throw new ValidationError('The deployment freeze is not valid.', problems);
};

export interface CreateFreezeCommand {
  readonly name: string;
  readonly reason?: string | null | undefined;
  readonly start_time: string;
  readonly end_time: string;
  /**
   * UUID or short id. Omitted or null: the tenant of the named environment or solution if any, else global
   * (global callers); the caller's tenant (tenant-scoped callers, who cannot send null).
   */
  readonly tenant_id?: string | null | undefined;
  readonly solution_id?: string | null | undefined;
  readonly environment_id?: string | null | undefined;
}

export const createFreeze = async (deps: Deps, caller: Caller, command: CreateFreezeCommand) => {
  const tenantId = await tenantForNew(deps, caller, command.tenant_id, 'deployment freezes');
  const problems: FieldProblem[] = [];
  const times = window(command.start_time, command.end_time, problems);
  const scope = await resolveScope(
    deps,
    caller,
    { tenantId, solutionId: command.solution_id ?? null, environmentId: command.environment_id ?? null },
    problems,
  );
  invalid(problems);
  const { id, shortId } = await deps.ids.next('freeze');
  const now = deps.clock.now();
  const freeze: Freeze = {
    id,
    shortId,
    name: command.name,
    reason: command.reason ?? null,
    ...times,
    ...scope,
    createdBy: caller.userId,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  await deps.freezes.create(freeze);
  return freezeView(freeze, now);
};

export type UpdateFreezeCommand = Partial<CreateFreezeCommand>;

/** Omitted fields keep their value, null clears a nullable one; the merged freeze is validated as on create. */
export const updateFreeze = async (deps: Deps, caller: Caller, id: string, command: UpdateFreezeCommand) => {
  const freeze = await findVisible(deps, caller, id);
  assertWritable(caller, freeze, 'deployment freeze');
  const tenantId =
    command.tenant_id === undefined
      ? freeze.tenantId
      : await tenantForNew(deps, caller, command.tenant_id, 'deployment freezes');
  const problems: FieldProblem[] = [];
  const times = window(command.start_time ?? freeze.startTime, command.end_time ?? freeze.endTime, problems);
  const scopeChanged =
    command.tenant_id !== undefined || command.solution_id !== undefined || command.environment_id !== undefined;
  const requested: FreezeScope = {
    tenantId,
    solutionId: command.solution_id === undefined ? freeze.solutionId : command.solution_id,
    environmentId: command.environment_id === undefined ? freeze.environmentId : command.environment_id,
  };
  const scope = scopeChanged ? await resolveScope(deps, caller, requested, problems) : requested;
  invalid(problems);
  const now = deps.clock.now();
  const next: Freeze = {
    ...freeze,
    name: command.name ?? freeze.name,
    reason: command.reason === undefined ? freeze.reason : command.reason,
    ...times,
    ...scope,
    updatedAt: now.toISOString(),
  };
  await deps.freezes.update(freeze, next);
  return freezeView(next, now);
};

export const deleteFreeze = async (deps: Pick<Deps, 'freezes'>, caller: Caller, id: string): Promise<void> => {
  const freeze = await findVisible(deps, caller, id);
  assertWritable(caller, freeze, 'deployment freeze');
  await deps.freezes.delete(freeze);
};
