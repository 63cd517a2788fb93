// Tenant administration. Only global callers create, change or delete tenants (a tenant-scoped caller gets 403
// FORBIDDEN for its own tenant, 404 for any other); a tenant-scoped caller sees only its own tenant. Slugs are
// unique (409) and may change: the claim moves in the same transaction. A tenant still referenced by
// environments or freezes cannot be deleted (409).
import { NotFoundError } from '../errors.js';
import { ForbiddenError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { TenancyDeps } from './deps.js';
import type { Tenant } from './types.js';

type Deps = Pick<TenancyDeps, 'tenants' | 'ids' | 'clock'>;

export const tenantView = (tenant: Tenant) => ({
  id: tenant.id,
  short_id: tenant.shortId,
  name: tenant.name,
  slug: tenant.slug,
  created_at: tenant.createdAt,
  updated_at: tenant.updatedAt,
});

const visible = (caller: Caller, tenant: Tenant): boolean => caller.tenantId === null || caller.tenantId === tenant.id;

const globalOnly = (caller: Caller): void => {
  if (caller.tenantId !== null)
    throw new ForbiddenError('Only global administrators manage tenants.', { reason: 'tenant_restriction' });
};

const findVisible = async (deps: Pick<Deps, 'tenants'>, caller: Caller, id: string): Promise<Tenant> => {
  const tenant = await deps.tenants.get(id);
  if (tenant === undefined || !visible(caller, tenant)) throw new NotFoundError('Tenant', id);
  return tenant;
};

/** Tenants by name (case-insensitive), then id. */
export const listTenants = async (deps: Pick<Deps, 'tenants'>, caller: Caller, query: PageRequest) => {
  const tenants = (await deps.tenants.listAll())
    .filter((t) => visible(caller, t))
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }) || a.id.localeCompare(b.id));
  const page = pageOf(tenants, query);
  return { data: page.data.map(tenantView), meta: page.meta };
};

export interface CreateTenantCommand {
  readonly name: string;
  readonly slug: string;
}

export const createTenant = async (deps: Deps, caller: Caller, command: CreateTenantCommand) => {
  globalOnly(caller);
  const { id, shortId } = await deps.ids.next('tenant');
  const now = deps.clock.now().toISOString();
  const tenant: Tenant = {
    id,
    shortId,
    name: command.name,
    slug: command.slug.toLowerCase(),
    createdAt: now,
    updatedAt: now,
  };
  await deps.tenants.create(tenant);
  return tenantView(tenant);
};

export const getTenant = async (deps: Pick<Deps, 'tenants'>, caller: Caller, id: string) =>
  tenantView(await findVisible(deps, caller, id));

export interface UpdateTenantCommand {
  readonly name?: string | undefined;
  readonly slug?: string | undefined;
}

/** Omitted fields keep their value. */
export const updateTenant = async (deps: Deps, caller: Caller, id: string, command: UpdateTenantCommand) => {
  const tenant = await findVisible(deps, caller, id);
  globalOnly(caller);
  const next: Tenant = {
    ...tenant,
    name: command.name ?? tenant.name,
    slug: command.slug?.toLowerCase() ?? tenant.slug,
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.tenants.update(tenant, next);
  return tenantView(next);
};

export const deleteTenant = async (deps: Pick<Deps, 'tenants'>, caller: Caller, id: string): Promise<void> => {
  const tenant = await findVisible(deps, caller, id);
  globalOnly(caller);
  await deps.tenants.delete(tenant);
};
