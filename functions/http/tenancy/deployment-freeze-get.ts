// handler -> getFreeze (domain/tenancy/freezes.ts) -> FreezeRepository, TenantRepository, EnvironmentRepository, SolutionLookup
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { getFreeze } from '../../../domain/tenancy/freezes.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { FreezeSchema, PathId } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'get_deployment_freeze',
      summary: 'One deployment freeze, by id or short id',
      tags: ['tenancy'],
      permission: 'freezes:read',
      params: PathId,
      responses: {
        200: { description: 'The freeze', schema: FreezeSchema },
        404: { description: 'NOT_FOUND (also another tenant)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getFreeze(deps(), caller, params.id) }),
  );

export const handler = makeHandler(tenancyDeps);
