// handler -> the 57 system permissions grouped by resource (read-only: they cannot be changed).
import * as v from 'valibot';
import { PERMISSIONS } from '../../../domain/identity/permissions.js';
import { http } from '../../shared/http.js';
import '../../shared/wiring.js';

const PermissionGroup = v.object({
  resource: v.string(),
  permissions: v.array(v.object({ name: v.string(), action: v.string(), description: v.string() })),
});

export const permissionGroups = (): v.InferOutput<typeof PermissionGroup>[] => {
  const groups = new Map<string, v.InferOutput<typeof PermissionGroup>>();
  for (const { name, resource, action, description } of PERMISSIONS) {
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
    responses: { 200: { description: 'Permission groups', schema: v.array(PermissionGroup) } },
  },
  async () => ({ statusCode: 200, body: permissionGroups() }),
);
