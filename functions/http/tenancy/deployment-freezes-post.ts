// handler -> createFreeze (domain/tenancy/freezes.ts) -> FreezeRepository, TenantRepository, EnvironmentRepository, SolutionLookup
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { createFreeze } from '../../../domain/tenancy/freezes.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { CreateFreezeBody, FreezeSchema } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'create_deployment_freeze',
      summary: 'Create a deployment freeze; without tenant_id, solution_id and environment_id it is global',
      tags: ['tenancy'],
      permission: 'freezes:create',
      body: CreateFreezeBody,
      responses: {
        201: { description: 'The freeze', schema: FreezeSchema },
        403: { description: 'FORBIDDEN: another tenant, or a global freeze by a tenant-scoped caller' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createFreeze(deps(), caller, body) }),
  );

export const handler = makeHandler(tenancyDeps);
