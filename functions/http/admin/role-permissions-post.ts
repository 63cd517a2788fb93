// handler -> changePermissions (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import { changePermissions, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { PathId, PermissionsBody } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'assign_permissions',
      summary: 'Give a custom role permissions',
      tags: ['admin'],
      permission: 'roles:update',
      body: PermissionsBody,
      params: PathId,
      responses: {
        204: { description: 'Assigned' },
        403: {
          description:
            'FORBIDDEN: a system role, or a tenant-scoped caller (tenant_restriction); INSUFFICIENT_PERMISSIONS: a permission the caller lacks (details.missing)',
        },
        404: { description: 'NOT_FOUND: the role or a permission' },
      },
    },
    async ({ caller, body, params }) => {
      await changePermissions(deps(), caller, params.id, body.permissions, 'assign');
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(rolesDeps);
