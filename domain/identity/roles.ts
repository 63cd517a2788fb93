import type { Permission } from './permissions.js';
import { systemRole } from './permissions.js';
import type { RoleDirectory } from './ports.js';

/** The system roles only; custom roles join when the admin roles endpoints store them. */
export const systemRoleDirectory: RoleDirectory = {
  permissionsOf: async (roles) => new Set<Permission>(roles.flatMap((name) => systemRole(name)?.permissions ?? [])),
};
