// handler -> getTenant (domain/tenancy/tenants.ts) -> TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { getTenant } from '../../../domain/tenancy/tenants.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { PathId, TenantSchema } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'get_tenant',
      summary: 'One tenant, by id or short id',
      tags: ['tenancy'],
      permission: 'tenants:read',
      params: PathId,
      responses: {
        200: { description: 'The tenant', schema: TenantSchema },
        404: { description: 'NOT_FOUND (also another tenant)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getTenant(deps(), caller, params.id) }),
  );

export const handler = makeHandler(tenancyDeps);
