// handler -> getEnvironment (domain/tenancy/environments.ts) -> EnvironmentRepository, TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { getEnvironment } from '../../../domain/tenancy/environments.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { EnvironmentSchema, PathId } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'get_environment',
      summary: 'One environment, by id or short id',
      tags: ['tenancy'],
      permission: 'environments:read',
      params: PathId,
      responses: {
        200: { description: 'The environment', schema: EnvironmentSchema },
        404: { description: 'NOT_FOUND (also another tenant)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getEnvironment(deps(), caller, params.id) }),
  );

export const handler = makeHandler(tenancyDeps);
