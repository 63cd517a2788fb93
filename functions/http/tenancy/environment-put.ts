// handler -> updateEnvironment (domain/tenancy/environments.ts) -> EnvironmentRepository, TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { updateEnvironment } from '../../../domain/tenancy/environments.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { EnvironmentSchema, PathId, UpdateEnvironmentBody } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'update_environment',
      summary: 'Rename an environment (its tenant cannot change)',
      tags: ['tenancy'],
      permission: 'environments:update',
      body: UpdateEnvironmentBody,
      params: PathId,
      responses: {
        200: { description: 'The environment', schema: EnvironmentSchema },
        403: { description: 'FORBIDDEN: a global environment, for a tenant-scoped caller' },
        404: { description: 'NOT_FOUND' },
        409: { description: 'CONFLICT: the name is taken in that tenant' },
      },
    },
    async ({ caller, body, params }) => ({
      statusCode: 200,
      body: await updateEnvironment(deps(), caller, params.id, body),
    }),
  );

export const handler = makeHandler(tenancyDeps);
