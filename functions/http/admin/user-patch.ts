// handler -> updateUser (domain/identity/users-admin.ts) -> UserDirectory, ApiKeyRepository
import * as v from 'valibot';
import { updateUser, type UsersDeps } from '../../../domain/identity/users-admin.js';
import { http } from '../../shared/http.js';
import { Uuid } from '../../shared/schemas.js';
import { revokingUsersDeps } from '../../shared/identity-wiring.js';
import { AdminUserSchema, PathId, RoleNames, UserStatusSchema } from './schemas.js';

const Body = v.object({
  display_name: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(255)))),
  status: v.optional(UserStatusSchema),
  roles: v.optional(RoleNames),
  tenant_id: v.optional(v.nullable(Uuid)),
});

export const makeHandler = (deps: () => UsersDeps) =>
  http(
    {
      operationId: 'update_user',
      summary:
        'Change display name, status, roles or tenant; deactivating or locking revokes sessions and API keys; moving a user out of the tenant of the identity provider it is linked through unlinks it',
      tags: ['admin'],
      permission: 'users:update',
      params: PathId,
      body: Body,
      responses: {
        200: { description: 'The user', schema: AdminUserSchema },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT' },
      },
    },
    async ({ caller, params, body }) => ({ statusCode: 200, body: await updateUser(deps(), caller, params.id, body) }),
  );

export const handler = makeHandler(revokingUsersDeps);
