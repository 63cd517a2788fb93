// handler -> deleteFreeze (domain/tenancy/freezes.ts) -> FreezeRepository, TenantRepository, EnvironmentRepository, SolutionLookup
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { deleteFreeze } from '../../../domain/tenancy/freezes.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'delete_deployment_freeze',
      summary: 'Delete a deployment freeze',
      tags: ['tenancy'],
      permission: 'freezes:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'FORBIDDEN: a global freeze, for a tenant-scoped caller' },
        404: { description: 'NOT_FOUND' },
      },
    },
    async ({ caller, params }) => {
      await deleteFreeze(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(tenancyDeps);
