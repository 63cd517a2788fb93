// handler -> createTenant (domain/tenancy/tenants.ts) -> TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { createTenant } from '../../../domain/tenancy/tenants.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { CreateTenantBody, TenantSchema } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'create_tenant',
      summary: 'Create a tenant (global administrators only)',
      tags: ['tenancy'],
      permission: 'tenants:create',
      body: CreateTenantBody,
      responses: {
        201: { description: 'The tenant', schema: TenantSchema },
        403: { description: 'FORBIDDEN: a tenant-scoped caller' },
        409: { description: 'CONFLICT: the slug is taken' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createTenant(deps(), caller, body) }),
  );

export const handler = makeHandler(tenancyDeps);
