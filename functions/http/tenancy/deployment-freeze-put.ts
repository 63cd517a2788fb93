// handler -> updateFreeze (domain/tenancy/freezes.ts) -> FreezeRepository, TenantRepository, EnvironmentRepository, SolutionLookup
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { updateFreeze } from '../../../domain/tenancy/freezes.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { FreezeSchema, PathId, UpdateFreezeBody } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'update_deployment_freeze',
      summary: 'Change a deployment freeze; omitted fields keep their value, null clears',
      tags: ['tenancy'],
      permission: 'freezes:update',
      body: UpdateFreezeBody,
      params: PathId,
      responses: {
        200: { description: 'The freeze', schema: FreezeSchema },
        403: { description: 'FORBIDDEN: a global freeze, for a tenant-scoped caller' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: changed meanwhile' },
      },
    },
    async ({ caller, body, params }) => ({
      statusCode: 200,
      body: await updateFreeze(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(tenancyDeps);
