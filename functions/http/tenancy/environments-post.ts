// handler -> createEnvironment (domain/tenancy/environments.ts) -> EnvironmentRepository, TenantRepository
import type { TenancyDeps } from '../../../domain/tenancy/deps.js';
import { createEnvironment } from '../../../domain/tenancy/environments.js';
import { http } from '../../shared/http.js';
import { tenancyDeps } from '../../shared/tenancy-wiring.js';
import { CreateEnvironmentBody, EnvironmentSchema } from './schemas.js';

export const makeHandler = (deps: () => TenancyDeps) =>
  http(
    {
      operationId: 'create_environment',
      summary: 'Create an environment, global or for a tenant',
      tags: ['tenancy'],
      permission: 'environments:create',
      body: CreateEnvironmentBody,
      responses: {
        201: { description: 'The environment', schema: EnvironmentSchema },
        403: { description: 'FORBIDDEN: another tenant' },
        409: { description: 'CONFLICT: the name is taken in that tenant' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createEnvironment(deps(), caller, body) }),
  );

export const handler = makeHandler(tenancyDeps);
