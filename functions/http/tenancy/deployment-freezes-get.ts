// handler -> listFreezes (domain/tenancy/freezes.ts) -> FreezeRepository, TenantRepository, EnvironmentRepository, SolutionLookup
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { listFreezes } from '../../../domain/tenancy/freezes.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { FreezeList, FreezesQuery } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'list_deployment_freezes',
      summary: 'Deployment freezes, newest first by start_time; filters active, tenant_id, environment_id',
      tags: ['tenancy'],
      permission: 'freezes:read',
      query: FreezesQuery,
      responses: { 200: { description: 'A page of deployment freezes', schema: FreezeList } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listFreezes(deps(), caller, query) }),
  );

export const handler = makeHandler(tenancyDeps);
