// handler -> getOrchestration (domain/deployments/queries.ts) -> Orchestration, PendingRequestRepository
import type { DeploymentsDeps } from '../../../domain/deployments/deps.js';
import { getOrchestration } from '../../../domain/deployments/queries.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { OrchestrationSchema } from './orchestration-put.js';

export const makeHandler = (deps: () => Pick<DeploymentsDeps, 'orchestration' | 'pending' | 'deployments'>) =>
  http(
    {
      operationId: 'get_orchestration',
      summary: 'Orchestration capacity: instances, in use, available, holders, waiting requests',
      tags: ['admin'],
      permission: 'deployments:read',
      responses: { 200: { description: 'The orchestration capacity', schema: OrchestrationSchema } },
    },
    async ({ caller }) => ({ statusCode: 200, body: await getOrchestration(deps(), caller) }),
  );

export const handler = makeHandler(deploymentsDeps);
