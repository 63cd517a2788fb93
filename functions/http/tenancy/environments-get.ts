// handler -> listEnvironments (domain/tenancy/environments.ts) -> EnvironmentRepository, TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { listEnvironments } from '../../../domain/tenancy/environments.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { EnvironmentList, EnvironmentsQuery } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'list_environments',
      summary:
        'Environments by name: global ones and those of the caller tenant; global callers may filter by tenant_id',
      tags: ['tenancy'],
      permission: 'environments:read',
      query: EnvironmentsQuery,
      responses: { 200: { description: 'A page of environments', schema: EnvironmentList } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listEnvironments(deps(), caller, query) }),
  );

export const handler = makeHandler(tenancyDeps);
