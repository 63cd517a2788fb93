// Who sees which Administration section (admin.tsx), apart from the sections themselves so that the header can decide
// whether to show its Administration link without loading the administration pages.

/** Each section's path (`#/admin/<path>`) and the permission that shows it. */
export const ADMIN_READ = {
  'api-keys': 'api_keys:read',
  users: 'users:read',
  roles: 'roles:read',
  tenants: 'tenants:read',
  environments: 'environments:read',
  'identity-providers': 'identity_providers:read',
  'oauth-clients': 'oauth_clients:read',
} as const;

export type AdminPath = keyof typeof ADMIN_READ;

/** Whether the caller sees any section (the header's Administration link). */
export const anyAdminSection = (permissions: ReadonlySet<string>): boolean =>
  Object.values(ADMIN_READ).some((p) => permissions.has(p));
