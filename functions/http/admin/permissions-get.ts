// handler -> the 57 system permissions grouped by resource (read-only: they cannot be changed).
import * as v from 'valibot';
import { PERMISSIONS } from '../../../domain/identity/permissions.js';
import { http } from '../../shared/http.js';

export const PermissionGroupSchema = v.object({
  resource: v.string(),
  permissions: v.array(v.object({ name: v.string(), action: v.string(), description: v.string() })),
});

/** Permissions grouped by resource, in the catalogue's order; all of them by default. */
export const groupPermissions = (only?: readonly string[]): v.InferOutput<typeof PermissionGroupSchema>[] => {
  const groups = new Map<string, v.InferOutput<typeof PermissionGroupSchema>>();
  const wanted = only === undefined ? undefined : new Set(only);
  for (const { name, resource, action, description } of PERMISSIONS) {
    if (wanted !== undefined && !wanted.has(name)) continue;
    const group = groups.get(resource) ?? { resource, permissions: [] };
    group.permissions.push({ name, action, description });
    groups.set(resource, group);
  }
  return [...groups.values()];
};

export const handler = http(
  {
    operationId: 'list_permissions',
    summary: 'The system permissions, grouped by resource',
    tags: ['admin'],
    permission: 'roles:read',
    responses: { 200: { description: 'Permission groups', schema: v.array(PermissionGroupSchema) } },
  },
  async () => ({ statusCode: 200, body: groupPermissions() }),
);
