// handler -> roleUsers (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import * as v from 'valibot';
import { roleUsers, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'get_role_users',
      summary: 'The users holding a role',
      tags: ['admin'],
      permission: 'roles:read',
      params: PathId,
      responses: {
        200: {
          description: 'Users',
          schema: v.array(
            v.object({
              id: v.string(),
              email: v.string(),
              username: v.string(),
              display_name: v.nullable(v.string()),
              status: v.string(),
            }),
          ),
        },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await roleUsers(deps(), caller, params.id) }),
  );

export const handler = makeHandler(rolesDeps);
