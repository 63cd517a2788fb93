// handler -> deleteTenant (domain/tenancy/tenants.ts) -> TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { deleteTenant } from '../../../domain/tenancy/tenants.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { PathId } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'delete_tenant',
      summary: 'Delete a tenant that no environment or freeze references (global administrators only)',
      tags: ['tenancy'],
      permission: 'tenants:delete',
      params: PathId,
      responses: {
        204: { description: 'Deleted' },
        403: { description: 'FORBIDDEN: a tenant-scoped caller' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: environments or freezes still reference it' },
      },
    },
    async ({ caller, params }) => {
      await deleteTenant(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(tenancyDeps);
