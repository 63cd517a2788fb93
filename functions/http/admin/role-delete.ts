// handler -> deleteRole (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import { deleteRole, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'delete_role',
      summary: 'Delete a custom role (users holding it lose it)',
      tags: ['admin'],
      permission: 'roles:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'FORBIDDEN: a system role, or a tenant-scoped caller (tenant_restriction)' },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ caller, params }) => {
      await deleteRole(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(rolesDeps);
