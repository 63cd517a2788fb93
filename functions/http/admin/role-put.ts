// handler -> updateRole (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import { updateRole, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { PathId, RoleBody, RoleDetailSchema } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'update_role',
      summary: 'Rename or describe a custom role',
      tags: ['admin'],
      permission: 'roles:update',
      body: RoleBody,
      params: PathId,
      responses: {
        200: { description: 'The role', schema: RoleDetailSchema },
        403: { description: 'FORBIDDEN: a system role, or a tenant-scoped caller (tenant_restriction)' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: the name is taken' },
      },
    },
    async ({ caller, body, params }) => ({ statusCode: 200, body: await updateRole(deps(), caller, params.id, body) }),
  );

export const handler = makeHandler(rolesDeps);
