// Admin: an identity provider's role mappings (a claim value -> a role, in a tenant or all). A mapping grants a role
// only when the caller holds every permission of that role (403 INSUFFICIENT_PERMISSIONS), and a mapping granting
// more than the caller holds is not theirs to change. A tenant provider's mappings are of its tenant.
import { NotFoundError, ValidationError } from '../errors.js';
import { InsufficientPermissionsError } from '../identity/errors.js';
import type { Caller } from '../identity/types.js';
import { missingFrom, roleGrants } from './grants.js';
import { findProvider, type ProvidersDeps } from './providers.js';
import type { IdentityProvider, RoleMapping } from './types.js';

/** Role mappings one provider may have. */
export const MAX_MAPPINGS = 100;

export const mappingView = (m: RoleMapping) => ({
  id: m.id,
  short_id: m.shortId,
  provider_id: m.providerId,
  claim_value: m.claimValue,
  role: m.role,
  tenant_id: m.tenantId,
  created_at: m.createdAt,
  updated_at: m.updatedAt,
});

const findMapping = async (deps: ProvidersDeps, provider: IdentityProvider, id: string): Promise<RoleMapping> => {
  const mapping = (await deps.providers.listMappings(provider.id)).find((m) => m.id === id || m.shortId === id);
  if (mapping === undefined) throw new NotFoundError('Role mapping', id);
  return mapping;
};

/** The role exists (400) and grants nothing the caller lacks (403). */
const checkRole = async (deps: ProvidersDeps, caller: Caller, role: string): Promise<void> => {
  const grants = await roleGrants(deps, role);
  if (grants === undefined) throw ValidationError.field('role', `There is no role named '${role}'.`);
  const missing = missingFrom(caller, grants);
  if (missing.length > 0) throw new InsufficientPermissionsError(missing);
};

/**
 * A global provider's mapping applies to users of one tenant, or (null, the default) to all the provider signs in. A
 * tenant provider's mapping applies to its tenant's users only: its tenant (the default), never null or another (400).
 */
const mappingTenant = async (
  deps: ProvidersDeps,
  provider: IdentityProvider,
  requested: string | null | undefined,
): Promise<string | null> => {
  if (provider.tenantId !== null) {
    if (requested === undefined) return provider.tenantId;
    const tenant = requested === null ? undefined : await deps.tenants.findTenant(requested);
    if (tenant?.id !== provider.tenantId)
      throw ValidationError.field(
        'tenant_id',
        "must be the provider's own tenant: a tenant's provider maps roles only for that tenant's users",
      );
    return tenant.id;
  }
  if (requested === undefined || requested === null) return null;
  const tenant = await deps.tenants.findTenant(requested);
  if (tenant === undefined) throw ValidationError.field('tenant_id', 'The tenant does not exist.');
  return tenant.id;
};

export const listMappings = async (deps: ProvidersDeps, caller: Caller, providerId: string) => {
  const provider = await findProvider(deps, caller, providerId);
  return (await deps.providers.listMappings(provider.id)).map(mappingView);
};

export interface MappingCommand {
  readonly claim_value: string;
  readonly role: string;
  readonly tenant_id?: string | null | undefined;
}

export const createMapping = async (
  deps: ProvidersDeps,
  caller: Caller,
  providerId: string,
  command: MappingCommand,
) => {
  const provider = await findProvider(deps, caller, providerId);
  await checkRole(deps, caller, command.role);
  const existing = await deps.providers.listMappings(provider.id);
  if (existing.length >= MAX_MAPPINGS)
    throw ValidationError.field('claim_value', `A provider has at most ${MAX_MAPPINGS} role mappings.`);
  const { id, shortId } = await deps.ids.next('role_mapping');
  const at = deps.clock.now().toISOString();
  const mapping: RoleMapping = {
    id,
    shortId,
    providerId: provider.id,
    claimValue: command.claim_value,
    role: command.role,
    tenantId: await mappingTenant(deps, provider, command.tenant_id),
    createdAt: at,
    updatedAt: at,
  };
  await deps.providers.putMapping(mapping);
  return mappingView(mapping);
};

export const updateMapping = async (
  deps: ProvidersDeps,
  caller: Caller,
  providerId: string,
  mappingId: string,
  command: Partial<MappingCommand>,
) => {
  const provider = await findProvider(deps, caller, providerId);
  const mapping = await findMapping(deps, provider, mappingId);
  await checkRole(deps, caller, mapping.role); // a stronger mapping is not the caller's to repoint
  if (command.role !== undefined) await checkRole(deps, caller, command.role);
  const next: RoleMapping = {
    ...mapping,
    ...(command.claim_value === undefined ? {} : { claimValue: command.claim_value }),
    ...(command.role === undefined ? {} : { role: command.role }),
    // A null stored on a tenant provider before the rule becomes the provider's tenant (what it meant at sign-in).
    tenantId:
      command.tenant_id === undefined
        ? (mapping.tenantId ?? provider.tenantId)
        : await mappingTenant(deps, provider, command.tenant_id),
    updatedAt: deps.clock.now().toISOString(),
  };
  await deps.providers.putMapping(next);
  return mappingView(next);
};

/** Deleting a mapping takes roles away at the next sign-in, never gives: allowed to whoever may delete mappings. */
export const deleteMapping = async (deps: ProvidersDeps, caller: Caller, providerId: string, mappingId: string) => {
  const provider = await findProvider(deps, caller, providerId);
  await deps.providers.deleteMapping(await findMapping(deps, provider, mappingId));
};
