// handler -> createUser (domain/identity/users-admin.ts) -> UserRepository, RoleRepository, PasswordHasher
import * as v from 'valibot';
import { createUser, type UsersDeps } from '../../../domain/identity/users-admin.js';
import { http } from '../../shared/http.js';
import { Uuid } from '../../shared/schemas.js';
import { usersDeps } from '../../shared/identity-wiring.js';
import { Email } from '../auth/schemas.js';
import { AdminUserSchema, RoleNames, UserStatusSchema } from './schemas.js';

const Body = v.object({
  email: Email,
  username: v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/, 'must be 1 to 64 letters, digits, ., _ or -'),
  ),
  password: v.pipe(v.string(), v.minLength(8, 'must be at least 8 characters'), v.maxLength(1024)),
  display_name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(255))),
  roles: RoleNames,
  tenant_id: v.optional(v.nullable(Uuid)),
  status: v.optional(UserStatusSchema),
});

export const makeHandler = (deps: () => UsersDeps) =>
  http(
    {
      operationId: 'create_user',
      summary: 'Create a user',
      tags: ['admin'],
      permission: 'users:create',
      body: Body,
      responses: {
        201: { description: 'The user', schema: AdminUserSchema },
        409: { description: 'CONFLICT: email or username taken' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createUser(deps(), caller, body) }),
  );

export const handler = makeHandler(usersDeps);
