// handler -> updateTenant (domain/tenancy/tenants.ts) -> TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { updateTenant } from '../../../domain/tenancy/tenants.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { PathId, TenantSchema, UpdateTenantBody } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'update_tenant',
      summary: 'Rename a tenant or change its slug (global administrators only)',
      tags: ['tenancy'],
      permission: 'tenants:update',
      body: UpdateTenantBody,
      params: PathId,
      responses: {
        200: { description: 'The tenant', schema: TenantSchema },
        403: { description: 'FORBIDDEN: a tenant-scoped caller' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: the slug is taken' },
      },
    },
    async ({ caller, body, params }) => ({
      statusCode: 200,
      body: await updateTenant(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(tenancyDeps);
