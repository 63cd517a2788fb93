// handler -> deleteEnvironment (domain/tenancy/environments.ts) -> EnvironmentRepository, TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { deleteEnvironment } from '../../../domain/tenancy/environments.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'delete_environment',
      summary: 'Delete an environment no freeze names',
      tags: ['tenancy'],
      permission: 'environments:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'FORBIDDEN: a global environment, for a tenant-scoped caller' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: freezes still name it' },
      },
    },
    async ({ caller, params }) => {
      await deleteEnvironment(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(tenancyDeps);
