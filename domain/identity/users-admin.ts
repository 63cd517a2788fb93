// User administration. Tenancy: a tenant-scoped caller sees and changes only users of its tenant (others answer
// 404) and creates users only there; a global caller sees everyone and may narrow to one tenant (plus global
// users). Nobody grants roles wider than their own permissions, and nobody manages a stronger user: changing or
// deleting a user needs every permission the user holds (403 INSUFFICIENT_PERMISSIONS naming the missing ones).
// The last active admin cannot be deactivated, locked, demoted or deleted (409). Edits write only the fields
// given, conditioned on the user's revision; a concurrent write (login, 2FA, logout) makes the edit read the user
// again, re-check and retry, up to EDIT_ATTEMPTS times, then 409. Deactivating, locking or deleting a user
// revokes their sessions (tokensValidAfter) and their API keys at once.
// Moving a user linked through a tenant's identity provider out of that tenant unlinks it in the same conditional
// write (identityLink null, the roles held only through that provider's mappings removed, the provider's count of
// linked users kept right): that provider no longer signs the user in (domain/sso/sign-in.ts refuses it anyway).
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Clock, IdGenerator } from '../shared/ports.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import { ForbiddenError, InsufficientPermissionsError } from './errors.js';
import type { ApiKeyRepository, PasswordHasher, RoleRepository, UserDirectory, UserRepository } from './ports.js';
import { systemRole, type Permission } from './permissions.js';
import type { Caller, IdentityLink, User, UserChanges, UserStatus } from './types.js';
import { closeRevokedViewers, type ViewerClosingDeps } from './viewers.js';

export interface UsersDeps extends ViewerClosingDeps {
  readonly users: UserRepository & UserDirectory;
  readonly roles: RoleRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly hasher: PasswordHasher;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  /** The identity providers users are linked to (domain/sso), for the tenant a provider belongs to. */
  readonly identityProviders: {
    get(id: string): Promise<{ readonly tenantId: string | null } | undefined>;
  };
}

export const adminUserView = (user: User) => ({
  id: user.id,
  short_id: user.shortId,
  email: user.email,
  username: user.username,
  display_name: user.displayName,
  status: user.status,
  roles: [...user.roles],
  tenant_id: user.tenantId,
  two_factor_enabled: user.twoFactor.enabled,
  created_at: user.createdAt,
  last_login_at: user.lastLoginAt,
  identity_provider:
    user.identityLink === undefined || user.identityLink === null
      ? null
      : { id: user.identityLink.providerId, name: user.identityLink.providerName, subject: user.identityLink.subject },
});

const visible = (caller: Caller, user: User): boolean => caller.tenantId === null || user.tenantId === caller.tenantId;

const findVisible = async (deps: UsersDeps, caller: Caller, id: string): Promise<User> => {
  const user = await deps.users.find(id);
  if (user === undefined || !visible(caller, user)) throw new NotFoundError('User', id);
  return user;
};

/** Writes of one admin edit before it answers 409: each retry follows another write to the same user. */
export const EDIT_ATTEMPTS = 4;

/** What the roles grant (system roles from code, custom ones from the repository; unknown names grant nothing). */
const permissionsOfRoles = async (deps: UsersDeps, roles: readonly string[]): Promise<Set<Permission>> => {
  const granted = new Set<Permission>();
  for (const name of roles)
    for (const p of systemRole(name)?.permissions ?? (await deps.roles.findByName(name))?.permissions ?? [])
      granted.add(p);
  return granted;
};

/** Nobody manages a stronger user: the caller holds every permission the target holds. */
const checkStronger = async (deps: UsersDeps, caller: Caller, target: User): Promise<void> => {
  const missing = [...(await permissionsOfRoles(deps, target.roles))].filter((p) => !caller.permissions.has(p)).sort();
  if (missing.length > 0) throw new InsufficientPermissionsError(missing);
};

const ADMIN_ROLE = 'admin';
const activeAdmin = (user: User): boolean => user.status === 'active' && user.roles.includes(ADMIN_ROLE);

/**
 * An active admin stops being one (or leaves its scope) only while another active admin of that scope remains:
 * for a global admin, another global one. A read-then-write check: two concurrent demotions can both pass.
 */
const keepAnAdmin = async (deps: UsersDeps, user: User, next: User | undefined): Promise<void> => {
  if (!activeAdmin(user) || (next !== undefined && activeAdmin(next) && next.tenantId === user.tenantId)) return;
  const covers = (u: User) => u.tenantId === null || u.tenantId === user.tenantId;
  const others = (await deps.users.listAll()).filter((u) => u.id !== user.id && activeAdmin(u) && covers(u));
  if (others.length === 0)
    throw new ConflictError('This is the last active admin: make another user an active admin first.', {
      reason: 'last_admin',
    });
};

/** Role names must exist and grant nothing the caller lacks (each role read once). */
const checkRoles = async (deps: UsersDeps, caller: Caller, roles: readonly string[]): Promise<void> => {
  const unknown: { field: string; code: 'VALIDATION_ERROR'; message: string }[] = [];
  const granted: Permission[] = [];
  for (const [index, name] of roles.entries()) {
    const permissions = systemRole(name)?.permissions ?? (await deps.roles.findByName(name))?.permissions;
    if (permissions === undefined)
      unknown.push({ field: `roles.${index}`, code: 'VALIDATION_ERROR', message: `There is no role named '${name}'.` });
    else granted.push(...permissions);
  }
  if (unknown.length > 0) throw new ValidationError('Unknown roles.', unknown);
  const missing = [...new Set(granted.filter((p) => !caller.permissions.has(p)))].sort();
  if (missing.length > 0) throw new InsufficientPermissionsError(missing);
};

const tenantFor = (caller: Caller, requested: string | null | undefined): string | null => {
  if (caller.tenantId === null) return requested ?? null;
  if (requested !== undefined && requested !== caller.tenantId)
    throw new ForbiddenError('You can only manage users of your own tenant.', { reason: 'tenant_restriction' });
  return caller.tenantId;
};

export interface ListUsersQuery extends PageRequest {
  readonly search?: string | undefined;
  readonly status?: UserStatus | undefined;
  readonly tenant_id?: string | undefined;
}

export const listUsers = async (deps: UsersDeps, caller: Caller, query: ListUsersQuery) => {
  const needle = query.search?.toLowerCase();
  const users = (await deps.users.listAll())
    .filter((u) => visible(caller, u))
    // The tenant filter is for global callers; tenant-scoped callers already see only their tenant.
    .filter(
      (u) =>
        caller.tenantId !== null ||
        query.tenant_id === undefined ||
        u.tenantId === query.tenant_id ||
        u.tenantId === null,
    )
    .filter((u) => query.status === undefined || u.status === query.status)
    .filter(
      (u) =>
        needle === undefined || u.email.toLowerCase().includes(needle) || u.username.toLowerCase().includes(needle),
    )
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const page = pageOf(users, query);
  return { data: page.data.map(adminUserView), meta: page.meta };
};

export interface CreateUserCommand {
  readonly email: string;
  readonly username: string;
  readonly password: string;
  readonly display_name?: string | undefined;
  readonly roles: readonly string[];
  readonly tenant_id?: string | null | undefined;
  readonly status?: UserStatus | undefined;
}

export const createUser = async (deps: UsersDeps, caller: Caller, command: CreateUserCommand) => {
  const tenantId = tenantFor(caller, command.tenant_id);
  await checkRoles(deps, caller, command.roles);
  const { id, shortId } = await deps.ids.next('user');
  const now = deps.clock.now().toISOString();
  const user: User = {
    id,
    shortId,
    email: command.email,
    username: command.username,
    displayName: command.display_name ?? null,
    status: command.status ?? 'active',
    roles: [...new Set(command.roles)],
    tenantId,
    passwordHash: await deps.hasher.hash(command.password),
    twoFactor: { enabled: false, secret: null, lastStep: null },
    emailVerified: false,
    tokensValidAfter: 0,
    revision: 0,
    createdAt: now,
    updatedAt: now,
    lastLoginAt: null,
  };
  await deps.users.create(user);
  return adminUserView(user);
};

export const getUser = async (deps: UsersDeps, caller: Caller, id: string) =>
  adminUserView(await findVisible(deps, caller, id));

const revokeAccess = async (deps: UsersDeps, user: User, at: Date): Promise<void> => {
  await deps.users.revokeTokens(user.id, at);
  for (const key of await deps.apiKeys.listByUser(user.id))
    if (key.revokedAt === null) await deps.apiKeys.revoke(key, at);
  await closeRevokedViewers(deps, { userId: user.id });
};

export interface UpdateUserCommand {
  readonly display_name?: string | null | undefined;
  readonly status?: UserStatus | undefined;
  readonly roles?: readonly string[] | undefined;
  readonly tenant_id?: string | null | undefined;
}

/**
 * The link a move to `tenantId` ends: a link through a tenant's provider, when the user leaves that tenant (to
 * another or to global). A global provider signs in users of any tenant: its links stay.
 */
const linkLeftBehind = async (
  deps: UsersDeps,
  user: User,
  tenantId: string | null | undefined,
): Promise<IdentityLink | undefined> => {
  const link = user.identityLink ?? undefined;
  if (tenantId === undefined || tenantId === user.tenantId || link === undefined) return undefined;
  const provider = await deps.identityProviders.get(link.providerId);
  return provider !== undefined && provider.tenantId !== null && provider.tenantId !== tenantId ? link : undefined;
};

export const updateUser = async (deps: UsersDeps, caller: Caller, id: string, command: UpdateUserCommand) => {
  if (command.tenant_id !== undefined && caller.tenantId !== null)
    throw new ForbiddenError('Only global administrators move users between tenants.', {
      reason: 'tenant_restriction',
    });
  if (command.roles !== undefined) await checkRoles(deps, caller, command.roles);
  const changes: UserChanges = {
    ...(command.display_name === undefined ? {} : { displayName: command.display_name }),
    ...(command.status === undefined ? {} : { status: command.status }),
    ...(command.roles === undefined ? {} : { roles: [...new Set(command.roles)] }),
    ...(command.tenant_id === undefined ? {} : { tenantId: command.tenant_id }),
  };
  for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
    const user = await findVisible(deps, caller, id);
    await checkStronger(deps, caller, user);
    if (user.id === caller.userId && command.status !== undefined && command.status !== 'active')
      throw new ConflictError('You cannot deactivate or lock your own account.');
    const unlink = await linkLeftBehind(deps, user, changes.tenantId);
    // Unlinked: the roles only that provider's mappings gave go with it (roles given in the request stay as given).
    const written: UserChanges =
      unlink === undefined || changes.roles !== undefined
        ? changes
        : { ...changes, roles: user.roles.filter((r) => !(user.mappedRoles ?? []).includes(r)) };
    const now = deps.clock.now();
    const next: User = {
      ...user,
      ...written,
      ...(unlink === undefined ? {} : { identityLink: null, mappedRoles: [] }),
      updatedAt: now.toISOString(),
      revision: user.revision + 1,
    };
    await keepAnAdmin(deps, user, next);
    if (!(await deps.users.update(user, written, now, unlink))) continue;
    if (user.status === 'active' && next.status !== 'active') await revokeAccess(deps, next, now);
    return adminUserView(next);
  }
  throw new ConflictError('The user kept changing meanwhile; read it again and retry.');
};

export const deleteUser = async (deps: UsersDeps, caller: Caller, id: string): Promise<void> => {
  const user = await findVisible(deps, caller, id);
  if (user.id === caller.userId) throw new ConflictError('You cannot delete your own account.');
  await checkStronger(deps, caller, user);
  await keepAnAdmin(deps, user, undefined);
  await revokeAccess(deps, user, deps.clock.now());
  await deps.users.delete(user);
};
