// handler -> findRole (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import * as v from 'valibot';
import { findRole, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { groupPermissions, PermissionGroupSchema } from './permissions-get.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'get_role_permissions',
      summary: 'The permissions of a role, grouped by resource',
      tags: ['admin'],
      permission: 'roles:read',
      params: PathId,
      responses: {
        200: { description: 'Permission groups', schema: v.array(PermissionGroupSchema) },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ params }) => ({
      statusCode: 200,
      body: groupPermissions((await findRole(deps(), params.id)).permissions),
    }),
  );

export const handler = makeHandler(rolesDeps);
