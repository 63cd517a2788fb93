// Tenant scoping shared by environments and freezes (decisions.md section 4): a tenant-scoped caller sees its
// tenant's records and global ones, changes only its tenant's (a global record answers 403), and creates only in
// its own tenant. Global callers see and change everything.
import { ValidationError } from '../errors.js';
import { ForbiddenError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import type { TenantLookup } from '../shared/lookups.js';

export const visibleTo = (caller: Caller, record: { readonly tenantId: string | null }): boolean =>
  caller.tenantId === null || record.tenantId === null || record.tenantId === caller.tenantId;

export const assertWritable = (caller: Caller, record: { readonly tenantId: string | null }, what: string): void => {
  if (caller.tenantId !== null && record.tenantId !== caller.tenantId) {
    throw new ForbiddenError(`This ${what} is global: only global administrators change it.`, {
      reason: 'tenant_restriction',
    });
  }
};

const restricted = (what: string) =>
  new ForbiddenError(`You can only manage ${what} of your own tenant.`, { reason: 'tenant_restriction' });

/**
 * The tenant a new record belongs to, as a UUID. Global callers: the requested tenant (it must exist: 400 on
 * `tenant_id`), or global when omitted or null. Tenant-scoped callers: their own tenant when omitted; any other
 * value, null included, answers 403 (whether or not that tenant exists).
 */
export const tenantForNew = async (
  deps: { tenants: TenantLookup },
  caller: Caller,
  requested: string | null | undefined,
  what: string,
): Promise<string | null> => {
  if (caller.tenantId !== null) {
    if (requested === undefined) return caller.tenantId;
    if (requested === null) throw restricted(what);
    const tenant = await deps.tenants.findTenant(requested);
    if (tenant?.id !== caller.tenantId) throw restricted(what);
    return tenant.id;
  }
  if (requested === undefined || requested === null) return null;
  const tenant = await deps.tenants.findTenant(requested);
  if (tenant === undefined) throw ValidationError.field('tenant_id', `Tenant '${requested}' does not exist.`);
  return tenant.id;
};
