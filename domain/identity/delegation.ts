// The delegation rule (docs/security.md): a delegated credential (an API key, an OAuth access token of either grant,
// a deploy trigger; an SSE token inherits the credential that asked for it) acts with the intersection of its scopes
// and its owner's CURRENT permissions, in its owner's CURRENT tenant, and never with a power that comes from a role
// rather than a permission. This module is the one place that builds such a caller and that decides every power the
// spec reserves for a role (the admin's freeze override, reuse of another's secrets, retry of a failed analysis).
import { ForbiddenError } from './errors.js';
import { personName } from './names.js';
import type { Permission } from './permissions.js';
import type { RoleDirectory } from './ports.js';
import type { Caller, DelegatedCredential, User } from './types.js';

export const ADMIN_ROLE = 'admin';

/** The permission whose holder may step around a freeze: who may change the freeze may step around it. */
export const FREEZE_OVERRIDE_PERMISSION: Permission = 'freezes:update';
/** The permission a delegated admin credential needs to retry a failed analysis request. */
export const ANALYSIS_RETRY_PERMISSION: Permission = 'analysis:manage';

/** A power the spec reserves for a role, and the permission that carries it into a credential of the role's holder. */
export interface RoleReservedPower {
  readonly role: string;
  readonly permission: Permission;
  /** In plain words, as the consent page says it. */
  readonly power: string;
}

export const ROLE_RESERVED_POWERS: readonly RoleReservedPower[] = [
  {
    role: ADMIN_ROLE,
    permission: FREEZE_OVERRIDE_PERMISSION,
    power: 'Deploy during an active deployment freeze (override the freeze)',
  },
  { role: ADMIN_ROLE, permission: ANALYSIS_RETRY_PERMISSION, power: 'Retry failure-analysis requests that failed' },
];

/** The role-reserved powers a credential with these scopes would carry for a user holding these roles (consent page). */
export const rolePowersGranted = (roles: readonly string[], scopes: readonly string[]): readonly RoleReservedPower[] =>
  ROLE_RESERVED_POWERS.filter((p) => roles.includes(p.role) && scopes.includes(p.permission));

/** The owner of a credential as of now: its current roles and tenant (and its names, for `userName`). */
export type Owner = Pick<User, 'id' | 'tenantId' | 'roles'> & Partial<Pick<User, 'displayName' | 'username'>>;

/** A user session (a login, or an SSE token such a login asked for): every other caller is a delegated credential. */
export const isUserSession = (caller: Caller): boolean => caller.kind === 'user';

/**
 * The caller a delegated credential stands for, from its owner's current roles and what each of them grants
 * (`roleGrants`: role name -> permissions; a role missing from it grants nothing). Permissions: the credential's
 * scopes ∩ the owner's current permissions. Tenant: the owner's current one. Roles: only those of the owner's roles
 * whose every permission is within those permissions, so a key scoped to `deployments:create` carries no `admin`,
 * and a key scoped to all 57 of an admin acts as one.
 */
export const delegatedCaller = (
  owner: Owner,
  roleGrants: ReadonlyMap<string, ReadonlySet<Permission>>,
  credential: DelegatedCredential,
): Caller => {
  const held = new Set<Permission>();
  for (const role of owner.roles) for (const permission of roleGrants.get(role) ?? []) held.add(permission);
  const permissions = new Set(credential.scopes.filter((scope) => held.has(scope)));
  const covered = (role: string) => [...(roleGrants.get(role) ?? [])].every((p) => permissions.has(p));
  return {
    kind: credential.type,
    userId: owner.id,
    ...(owner.username === undefined
      ? {}
      : { userName: personName({ displayName: owner.displayName ?? null, username: owner.username }) }),
    tenantId: owner.tenantId,
    roles: owner.roles.filter((role) => roleGrants.has(role) && covered(role)),
    permissions,
    credential,
    ownerRoles: [...owner.roles],
    ...(credential.type === 'api_key' ? { apiKeyId: credential.id } : {}),
    ...(credential.type === 'oauth' ? { clientId: credential.id } : {}),
  };
};

/** What each of the owner's roles grants now (one directory lookup per role, as for the union). */
export const roleGrantsOf = async (
  roles: RoleDirectory,
  names: readonly string[],
): Promise<ReadonlyMap<string, ReadonlySet<Permission>>> =>
  new Map(await Promise.all(names.map(async (name) => [name, await roles.permissionsOf([name])] as const)));

/** delegatedCaller with the owner's roles read from the directory. */
export const callerOfCredential = async (
  roles: RoleDirectory,
  owner: Owner,
  credential: DelegatedCredential,
): Promise<Caller> => delegatedCaller(owner, await roleGrantsOf(roles, owner.roles), credential);

/**
 * Whether the caller may use a power the spec reserves for the admin role. A user session: it holds the admin role.
 * A delegated caller: its OWNER holds the admin role now AND the credential's effective permissions include
 * `permission` (the permission that names the power), so a scope never narrowed by a role cannot carry it.
 */
export const actsAsAdmin = (caller: Caller, permission: Permission): boolean =>
  isUserSession(caller)
    ? caller.roles.includes(ADMIN_ROLE)
    : (caller.ownerRoles ?? []).includes(ADMIN_ROLE) && caller.permissions.has(permission);

/** `override_freeze`: an admin session, or an admin's credential whose scopes name `freezes:update`. */
export const mayOverrideFreeze = (caller: Caller): boolean => actsAsAdmin(caller, FREEZE_OVERRIDE_PERMISSION);

/** Retrying a failed analysis request: an admin session, or an admin's credential scoped to `analysis:manage`. */
export const mayRetryFailedAnalysis = (caller: Caller): boolean => actsAsAdmin(caller, ANALYSIS_RETRY_PERMISSION);

/**
 * Whether a redeploy may reuse the secret values of a deployment `triggeredBy` started: the same user (with any of
 * their credentials), or a user SESSION with the admin role. No permission names this power, so no delegated
 * credential of another user carries it: it gives each secret again.
 */
export const mayReuseSecretsOf = (caller: Caller, triggeredBy: string): boolean =>
  caller.userId === triggeredBy || (isUserSession(caller) && caller.roles.includes(ADMIN_ROLE));

/** What only a user session holding the admin role may do (changing the shared orchestration capacity). */
export const isAdminSession = (caller: Caller): boolean => isUserSession(caller) && caller.roles.includes(ADMIN_ROLE);

/** 403 FORBIDDEN `user_credentials_required` for anything but a user session. */
export const requireUserSession = (caller: Caller, what: string): void => {
  if (!isUserSession(caller))
    throw new ForbiddenError(`${what} needs a user login: API keys, OAuth tokens and triggers cannot do it.`, {
      reason: 'user_credentials_required',
    });
};

/**
 * Whether the caller stands in for `owner` when handing over what acts for the owner (re-keying an OAuth client
 * the owner created): the owner themself, or a caller who acts with every current role of the owner (delegated:
 * its effective roles) in the same scope (a global caller, or one of the owner's tenant).
 */
export const actsWithEveryRoleOf = (caller: Caller, owner: Owner): boolean =>
  caller.userId === owner.id ||
  ((caller.tenantId === null || caller.tenantId === owner.tenantId) &&
    owner.roles.every((role) => caller.roles.includes(role)));
