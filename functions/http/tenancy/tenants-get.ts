// handler -> listTenants (domain/tenancy/tenants.ts) -> TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { listTenants } from '../../../domain/tenancy/tenants.js';
import { http } from '../../shared/http.js';
import { PageQuery } from '../../shared/schemas.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { TenantList } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'list_tenants',
      summary: 'Tenants, by name (a tenant-scoped caller sees only its own)',
      tags: ['tenancy'],
      permission: 'tenants:read',
      query: PageQuery(50),
      responses: { 200: { description: 'A page of tenants', schema: TenantList } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listTenants(deps(), caller, query) }),
  );

export const handler = makeHandler(tenancyDeps);
