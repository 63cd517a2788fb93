// handler -> listRoles (domain/identity/roles-admin.ts) -> RoleRepository, UserDirectory
import * as v from 'valibot';
import { listRoles, type RolesDeps } from '../../../domain/identity/roles-admin.js';
import { http } from '../../shared/http.js';
import { PageQuery } from '../../shared/schemas.js';
import { rolesDeps } from '../../shared/identity-wiring.js';
import { MetaSchema, RoleSchema } from './schemas.js';

export const makeHandler = (deps: () => RolesDeps) =>
  http(
    {
      operationId: 'list_roles',
      summary: 'List roles (system and custom)',
      tags: ['admin'],
      permission: 'roles:read',
      query: PageQuery(50),
      responses: {
        200: { description: 'A page of roles', schema: v.object({ data: v.array(RoleSchema), meta: MetaSchema }) },
      },
    },
    async ({ query }) => ({ statusCode: 200, body: await listRoles(deps(), query) }),
  );

export const handler = makeHandler(rolesDeps);
