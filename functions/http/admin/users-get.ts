// handler -> listUsers (domain/identity/users-admin.ts) -> UserDirectory
import * as v from 'valibot';
import { listUsers, type UsersDeps } from '../../../domain/identity/users-admin.js';
import { http } from '../../shared/http.js';
import { PageQuery, Uuid } from '../../shared/schemas.js';
import { usersDeps } from '../../shared/identity-wiring.js';
import { AdminUserSchema, MetaSchema, UserStatusSchema } from './schemas.js';

const Query = v.object({
  ...PageQuery(50).entries,
  search: v.optional(v.pipe(v.string(), v.maxLength(255))),
  status: v.optional(UserStatusSchema),
  tenant_id: v.optional(Uuid),
});

export const makeHandler = (deps: () => UsersDeps) =>
  http(
    {
      operationId: 'list_users',
      summary: 'Users: search over username and email, exact status, tenant (global admins)',
      tags: ['admin'],
      permission: 'users:read',
      query: Query,
      responses: {
        200: { description: 'A page of users', schema: v.object({ data: v.array(AdminUserSchema), meta: MetaSchema }) },
      },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listUsers(deps(), caller, query) }),
  );

export const handler = makeHandler(usersDeps);
