// handler -> listPendingRequests (domain/deployments/queries.ts) -> PendingRequestRepository
import * as v from 'valibot';
import type { DeploymentsDeps } from '../../../domain/deployments/deps.js';
import { listPendingRequests } from '../../../domain/deployments/queries.js';
import { PENDING_STATUSES } from '../../../domain/deployments/types.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { Uuid } from '../../shared/schemas.js';
import { PendingRequestSchema } from './schemas.js';

const Query = v.object({
  tenant_id: v.optional(Uuid),
  status: v.optional(v.picklist(PENDING_STATUSES, `must be one of ${PENDING_STATUSES.join(', ')}`)),
});

export const makeHandler = (deps: () => Pick<DeploymentsDeps, 'pending'>) =>
  http(
    {
      operationId: 'list_pending_deployments',
      summary: 'Pending dispatch requests, newest first; waiting ones carry their queue_position',
      tags: ['deployments'],
      permission: 'pending_deployments:read',
      query: Query,
      responses: {
        200: { description: 'A bare array of pending dispatch requests', schema: v.array(PendingRequestSchema) },
      },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listPendingRequests(deps(), caller, query) }),
  );

export const handler = makeHandler(deploymentsDeps);
