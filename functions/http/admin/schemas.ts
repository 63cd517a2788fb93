import * as v from 'valibot';

export { MetaSchema, PathId } from '../../shared/schemas.js';

export const RoleSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  description: v.nullable(v.string()),
  is_system: v.boolean(),
  created_at: v.string(),
  updated_at: v.string(),
});

export const RoleDetailSchema = v.object({ ...RoleSchema.entries, permissions: v.array(v.string()) });

export const RoleBody = v.object({
  name: v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^[a-z][a-z0-9_-]{1,62}$/i, 'must be 2 to 63 letters, digits, - or _, starting with a letter'),
  ),
  description: v.optional(v.pipe(v.string(), v.maxLength(1000))),
});

export const PermissionsBody = v.object({
  permissions: v.pipe(
    v.array(v.pipe(v.string(), v.maxLength(100))),
    v.minLength(1, 'name at least one permission'),
    v.maxLength(57),
  ),
});

export const UserStatusSchema = v.picklist(
  ['active', 'inactive', 'locked', 'pending'],
  'must be one of active, inactive, locked, pending',
);

export const AdminUserSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  email: v.string(),
  username: v.string(),
  display_name: v.nullable(v.string()),
  status: UserStatusSchema,
  roles: v.array(v.string()),
  tenant_id: v.nullable(v.string()),
  two_factor_enabled: v.boolean(),
  created_at: v.string(),
  last_login_at: v.nullable(v.string()),
  /** The identity provider the user signs in with (single sign-on), or null. */
  identity_provider: v.nullable(v.object({ id: v.string(), name: v.string(), subject: v.string() })),
});

export const RoleNames = v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(63))), v.maxLength(20));
