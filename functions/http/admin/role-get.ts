// handler -> roleDetail (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import { roleDetail, findRole, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { PathId, RoleDetailSchema } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'get_role',
      summary: 'One role with its permissions',
      tags: ['admin'],
      permission: 'roles:read',
      params: PathId,
      responses: { 200: { description: 'The role', schema: RoleDetailSchema }, 404: { description: 'NOT_FOUND' } },
    },
    async ({ params }) => ({ statusCode: 200, body: roleDetail(await findRole(deps(), params.id)) }),
  );

export const handler = makeHandler(rolesDeps);
