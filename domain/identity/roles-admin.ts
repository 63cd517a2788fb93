// Role administration: system roles (code, fixed ids) and custom roles (stored). System roles cannot be changed
// or deleted (403 FORBIDDEN). Names are unique, system names included (409). Renaming or deleting a custom role
// updates every user holding it, so a later role of the same name grants nothing by accident.
// Nobody grants what they do not hold: assigning permissions needs the caller to hold each (403
// INSUFFICIENT_PERMISSIONS naming the missing ones). Every role is shared across tenants (system roles, and custom
// roles, which have no tenant), so tenant-scoped callers cannot create, change or delete roles (403 FORBIDDEN,
// reason tenant_restriction), and a role's user list shows them only users of their own tenant.
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import { ForbiddenError, InsufficientPermissionsError } from './errors.js';
import { isPermission, SYSTEM_ROLES, systemRole, type Permission } from './permissions.js';
import type { Role, RoleDirectory, RoleMappingReferences, RoleRepository, UserDirectory } from './ports.js';
import type { Caller } from './types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';

export interface RolesDeps {
  readonly roles: RoleRepository;
  readonly users: UserDirectory;
  /** Identity providers' role mappings name roles too: a renamed role is renamed there, a deleted one unmapped. */
  readonly roleMappings?: RoleMappingReferences;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}

const EPOCH = '2026-01-01T00:00:00.000Z';

export const systemRoles = (): Role[] =>
  SYSTEM_ROLES.map((r) => ({
    id: r.id,
    shortId: r.name,
    name: r.name,
    description: r.description,
    isSystem: true,
    permissions: r.permissions,
    createdAt: EPOCH,
    updatedAt: EPOCH,
  }));

export const roleView = (role: Role) => ({
  id: role.id,
  short_id: role.shortId,
  name: role.name,
  description: role.description,
  is_system: role.isSystem,
  created_at: role.createdAt,
  updated_at: role.updatedAt,
});

export const roleDetail = (role: Role) => ({ ...roleView(role), permissions: [...role.permissions].sort() });

export const findRole = async (deps: Pick<RolesDeps, 'roles'>, id: string): Promise<Role> => {
  const role = systemRoles().find((r) => r.id === id || r.shortId === id) ?? (await deps.roles.get(id));
  if (role === undefined) throw new NotFoundError('Role', id);
  return role;
};

/** Roles are shared by every tenant: only global callers change them. */
const globalCaller = (caller: Caller): void => {
  if (caller.tenantId !== null)
    throw new ForbiddenError('Roles are shared by every tenant: only global administrators change them.', {
      reason: 'tenant_restriction',
    });
};

const editable = async (deps: RolesDeps, caller: Caller, id: string): Promise<Role> => {
  globalCaller(caller);
  const role = await findRole(deps, id);
  if (role.isSystem)
    throw new ForbiddenError(`${role.name} is a system role: it cannot be changed or deleted.`, {
      reason: 'system_role',
    });
  return role;
};

const nameFree = async (deps: RolesDeps, name: string, except?: Role): Promise<void> => {
  const existing = await deps.roles.findByName(name);
  const taken = systemRole(name.toLowerCase()) !== undefined || (existing !== undefined && existing.id !== except?.id);
  if (taken) throw new ConflictError(`A role named '${name}' already exists.`, { field: 'name' });
};

export const listRoles = async (deps: RolesDeps, page: PageRequest) => {
  const all = [...systemRoles(), ...(await deps.roles.list())].sort((a, b) => a.name.localeCompare(b.name));
  const result = pageOf(all, page);
  return { data: result.data.map(roleView), meta: result.meta };
};

export const createRole = async (
  deps: RolesDeps,
  caller: Caller,
  command: { name: string; description?: string | undefined },
) => {
  globalCaller(caller);
  await nameFree(deps, command.name);
  const { id, shortId } = await deps.ids.next('role');
  const now = deps.clock.now().toISOString();
  const role: Role = {
    id,
    shortId,
    name: command.name,
    description: command.description ?? null,
    isSystem: false,
    permissions: [],
    createdAt: now,
    updatedAt: now,
  };
  await deps.roles.create(role);
  return roleDetail(role);
};

export const updateRole = async (
  deps: RolesDeps,
  caller: Caller,
  id: string,
  command: { name: string; description?: string | undefined },
) => {
  const role = await editable(deps, caller, id);
  if (command.name.toLowerCase() !== role.name.toLowerCase()) await nameFree(deps, command.name, role);
  const now = deps.clock.now();
  const next: Role = {
    ...role,
    name: command.name,
    description: command.description ?? role.description,
    updatedAt: now.toISOString(),
  };
  await deps.roles.update(role, next);
  if (next.name !== role.name) await renameInUsers(deps, role.name, next.name, now);
  return roleDetail(next);
};

export const deleteRole = async (deps: RolesDeps, caller: Caller, id: string): Promise<void> => {
  const role = await editable(deps, caller, id);
  await renameInUsers(deps, role.name, undefined, deps.clock.now());
  await deps.roles.delete(role);
};

const renameInUsers = async (deps: RolesDeps, from: string, to: string | undefined, at: Date): Promise<void> => {
  const rename = (names: readonly string[]) =>
    names.flatMap((r) => (r === from ? (to === undefined ? [] : [to]) : [r]));
  for (const user of await deps.users.listAll()) {
    if (!user.roles.includes(from) && !(user.mappedRoles ?? []).includes(from)) continue;
    await deps.users.replaceRoles(
      user.id,
      rename(user.roles),
      at,
      user.mappedRoles === undefined ? undefined : rename(user.mappedRoles),
    );
  }
  await deps.roleMappings?.renameRole(from, to, at);
};

const known = (names: readonly string[]): Permission[] => {
  const unknown = names.filter((n) => !isPermission(n));
  if (unknown.length > 0) throw new NotFoundError('Permission', unknown.join(', '));
  return names as Permission[];
};

export const changePermissions = async (
  deps: RolesDeps,
  caller: Caller,
  id: string,
  names: readonly string[],
  change: 'assign' | 'remove',
): Promise<void> => {
  if (names.length === 0) throw ValidationError.field('permissions', 'Name at least one permission.');
  const role = await editable(deps, caller, id);
  const requested = new Set(known(names));
  if (change === 'assign') {
    const missing = [...requested].filter((p) => !caller.permissions.has(p));
    if (missing.length > 0) throw new InsufficientPermissionsError(missing);
  }
  const permissions =
    change === 'assign'
      ? [...new Set([...role.permissions, ...requested])]
      : role.permissions.filter((p) => !requested.has(p));
  await deps.roles.update(role, { ...role, permissions, updatedAt: deps.clock.now().toISOString() });
};

export const roleUsers = async (deps: RolesDeps, caller: Caller, id: string) => {
  const role = await findRole(deps, id);
  return (await deps.users.listAll())
    .filter((u) => u.roles.includes(role.name))
    .filter((u) => caller.tenantId === null || u.tenantId === caller.tenantId)
    .map((u) => ({ id: u.id, email: u.email, username: u.username, display_name: u.displayName, status: u.status }));
};

/** System roles from code, custom ones from the repository: what a caller's role names grant. */
export const roleDirectory = (roles: Pick<RoleRepository, 'findByName'>): RoleDirectory => ({
  permissionsOf: async (names) => {
    const granted = new Set<Permission>();
    for (const name of names) {
      const permissions = systemRole(name)?.permissions ?? (await roles.findByName(name))?.permissions ?? [];
      for (const permission of permissions) granted.add(permission);
    }
    return granted;
  },
});
