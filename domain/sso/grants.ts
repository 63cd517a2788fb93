// What roles grant and what a caller holds: nobody hands out (through a provider or a role mapping) what they do not
// hold. Shared by the provider and role-mapping use cases.
import { systemRole, type Permission } from '../identity/permissions.js';
import type { RoleRepository } from '../identity/ports.js';
import type { Caller } from '../identity/types.js';

/** Where custom roles are found by name. */
export interface RoleNames {
  readonly roles: Pick<RoleRepository, 'findByName'>;
}

/** The permissions of a role by name (system roles from code, custom from the repository); undefined: no such role. */
export const roleGrants = async (deps: RoleNames, name: string) =>
  systemRole(name)?.permissions ?? (await deps.roles.findByName(name))?.permissions;

export const grantsOf = async (deps: RoleNames, roles: readonly string[]): Promise<Set<Permission>> => {
  const all = new Set<Permission>();
  for (const name of roles) for (const p of (await roleGrants(deps, name)) ?? []) all.add(p);
  return all;
};

export const missingFrom = (caller: Caller, wanted: Iterable<Permission>): Permission[] =>
  [...new Set(wanted)].filter((p) => !caller.permissions.has(p)).sort();
