// handler -> cancelPendingRequest (domain/deployments/queries.ts) -> PendingRequestRepository
import type { DeploymentsDeps } from '../../../domain/deployments/deps.js';
import { cancelPendingRequest } from '../../../domain/deployments/queries.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { PathId } from '../../shared/schemas.js';

export const makeHandler = (deps: () => Pick<DeploymentsDeps, 'pending' | 'clock'>) =>
  http(
    {
      operationId: 'cancel_pending_deployment',
      summary: 'Cancel a pending or processing dispatch request',
      tags: ['deployments'],
      permission: 'pending_deployments:cancel',
      params: PathId,
      responses: {
        200: { description: 'Cancelled (empty body)' },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: the request is already dispatched, cancelled or failed' },
      },
    },
    async ({ caller, params }) => {
      await cancelPendingRequest(deps(), caller, params.id);
      return { statusCode: 200 };
    },
  );

export const handler = makeHandler(deploymentsDeps);
