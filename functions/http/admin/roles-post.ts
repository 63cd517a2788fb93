// handler -> createRole (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import { createRole, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { RoleBody, RoleDetailSchema } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'create_role',
      summary: 'Create a custom role (no permissions yet)',
      tags: ['admin'],
      permission: 'roles:create',
      body: RoleBody,
      responses: {
        201: { description: 'The role', schema: RoleDetailSchema },
        409: { description: 'CONFLICT: the name is taken' },
        403: { description: 'FORBIDDEN: a tenant-scoped caller (tenant_restriction)' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createRole(deps(), caller, body) }),
  );

export const handler = makeHandler(rolesDeps);
