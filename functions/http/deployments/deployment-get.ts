// handler -> getDeployment (domain/deployments/queries.ts) -> DeploymentRepository
import type { DeploymentsDeps } from '../../../domain/deployments/deps.js';
import { getDeployment } from '../../../domain/deployments/queries.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { PathId } from '../../shared/schemas.js';
import { DeploymentDetailSchema } from './schemas.js';

export const makeHandler = (deps: () => Pick<DeploymentsDeps, 'deployments'>) =>
  http(
    {
      operationId: 'get_deployment',
      summary: 'One deployment with its config and plan, by id or short id',
      tags: ['deployments'],
      permission: 'deployments:read',
      params: PathId,
      responses: {
        200: { description: 'The deployment detail', schema: DeploymentDetailSchema },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await getDeployment(deps(), caller, params.id) }),
  );

export const handler = makeHandler(deploymentsDeps);
