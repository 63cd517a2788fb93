// handler -> setOrchestration (domain/deployments/queries.ts) -> Orchestration, DispatchQueue
import * as v from 'valibot';
import type { DeploymentsDeps } from '../../../domain/deployments/deps.js';
import { MAX_INSTANCES, setOrchestration } from '../../../domain/deployments/queries.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';

const Body = v.object({
  instances: v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(0, 'must be at least 0'),
    v.maxValue(MAX_INSTANCES, `must be at most ${MAX_INSTANCES}`),
  ),
});

export const OrchestrationSchema = v.object({
  instances: v.number(),
  in_use: v.number(),
  available: v.number(),
  holders: v.array(v.object({ instance_id: v.string(), deployment_id: v.string() })),
  pending: v.number(),
});

export const makeHandler = (
  deps: () => Pick<DeploymentsDeps, 'orchestration' | 'pending' | 'deployments' | 'dispatch'>,
) =>
  http(
    {
      operationId: 'set_orchestration',
      summary: 'Set the orchestration capacity (global admins, user login); raising it dispatches waiting requests',
      tags: ['admin'],
      permission: 'deployments:read',
      credentials: 'user',
      body: Body,
      responses: {
        200: { description: 'The orchestration capacity after the change', schema: OrchestrationSchema },
        403: {
          description:
            'INSUFFICIENT_PERMISSIONS without the admin role; FORBIDDEN for a tenant-scoped admin or an API key',
        },
      },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await setOrchestration(deps(), caller, body) }),
  );

export const handler = makeHandler(deploymentsDeps);
