// handler -> getUser (domain/identity/users-admin.ts) -> UserDirectory
import { getUser, type UsersDeps } from '../../../domain/identity/users-admin.js';
import { http } from '../../shared/http.js';
import { usersDeps } from '../../shared/identity-wiring.js';
import { AdminUserSchema, PathId } from './schemas.js';

export const makeHandler = (deps: () => UsersDeps) =>
  http(
    {
      operationId: 'get_user',
      summary: 'One user, by id or short id',
      tags: ['admin'],
      permission: 'users:read',
      params: PathId,
      responses: {
        200: { description: 'The user', schema: AdminUserSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getUser(deps(), caller, params.id) }),
  );

export const handler = makeHandler(usersDeps);
