// Environments: global (tenant_id null) or one tenant's, fixed at creation. Names are unique (case-insensitive)
// within their tenant, or among global environments (409). Tenant scoping as in scope.ts: tenant-scoped callers
// see global environments but cannot change them. An environment still named by freezes cannot be deleted (409).
import { NotFoundError, ValidationError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { TenancyDeps } from './deps.js';
import { assertWritable, tenantForNew, visibleTo } from './scope.js';
import type { Environment } from './types.js';

type Deps = Pick<TenancyDeps, 'tenants' | 'environments' | 'ids' | 'clock'>;

export const environmentView = (environment: Environment) => ({
  id: environment.id,
  short_id: environment.shortId,
  name: environment.name,
  tenant_id: environment.tenantId,
  created_at: environment.createdAt,
  updated_at: environment.updatedAt,
});

const findVisible = async (deps: Pick<Deps, 'environments'>, caller: Caller, id: string): Promise<Environment> => {
  const environment = await deps.environments.get(id);
  if (environment === undefined || !visibleTo(caller, environment)) throw new NotFoundError('Environment', id);
  return environment;
};

export interface ListEnvironmentsQuery extends PageRequest {
  /** Global callers only (tenant-scoped callers already see only their tenant's and global ones): exact match. */
  readonly tenant_id?: string | undefined;
}

/** Environments by name (case-insensitive), then id. */
export const listEnvironments = async (
  deps: Pick<Deps, 'environments'>,
  caller: Caller,
  query: ListEnvironmentsQuery,
) => {
  const environments = (await deps.environments.listAll())
    .filter((e) => visibleTo(caller, e))
    .filter(
      (e) => caller.tenantId !== null || query.tenant_id === undefined || e.tenantId === query.tenant_id.toLowerCase(),
    )
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }) || a.id.localeCompare(b.id));
  const page = pageOf(environments, query);
  return { data: page.data.map(environmentView), meta: page.meta };
};

export interface CreateEnvironmentCommand {
  readonly name: string;
  /** UUID or short id; omitted or null: global (global callers), the caller's tenant (tenant-scoped callers). */
  readonly tenant_id?: string | null | undefined;
}

export const createEnvironment = async (deps: Deps, caller: Caller, command: CreateEnvironmentCommand) => {
  const tenantId = await tenantForNew(deps, caller, command.tenant_id, 'environments');
  const { id, shortId } = await deps.ids.next('environment');
  const now = deps.clock.now().toISOString();
  const environment: Environment = { id, shortId, name: command.name, tenantId, createdAt: now, updatedAt: now };
  await deps.environments.create(environment);
  return environmentView(environment);
};

export const getEnvironment = async (deps: Pick<Deps, 'environments'>, caller: Caller, id: string) =>
  environmentView(await findVisible(deps, caller, id));

export interface UpdateEnvironmentCommand {
  readonly name?: string | undefined;
  /** Accepted only when it names the current tenant (or null for a global environment): the tenant cannot change. */
  readonly tenant_id?: string | null | undefined;
}

const sameTenant = async (
  deps: Pick<Deps, 'tenants'>,
  environment: Environment,
  requested: string | null,
): Promise<boolean> => {
  if (requested === null || environment.tenantId === null) return requested === environment.tenantId;
  return (await deps.tenants.findTenant(requested))?.id === environment.tenantId;
};

/** Omitted fields keep their value; the tenant cannot change (400 on `tenant_id`). */
export const updateEnvironment = async (deps: Deps, caller: Caller, id: string, command: UpdateEnvironmentCommand) => {
  const environment = await findVisible(deps, caller, id);
  assertWritable(caller, environment, 'environment');
  if (command.tenant_id !== undefined && !(await sameTenant(deps, environment, command.tenant_id))) {
    throw ValidationError.field(
      'tenant_id',
      "An environment's tenant cannot change; create a new environment instead.",
    );
  }
  const next: Environment = {
    ...environment,
    name: command.name ?? environment.name,
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.environments.update(environment, next);
  return environmentView(next);
};

export const deleteEnvironment = async (
  deps: Pick<Deps, 'environments'>,
  caller: Caller,
  id: string,
): Promise<void> => {
  const environment = await findVisible(deps, caller, id);
  assertWritable(caller, environment, 'environment');
  await deps.environments.delete(environment);
};
