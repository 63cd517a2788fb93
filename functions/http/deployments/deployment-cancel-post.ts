// handler -> cancelDeployment (domain/deployments/cancel.ts) -> Orchestration, CommandRepository, DispatchQueue
import * as v from 'valibot';
import { cancelDeployment, type CancelDeps } from '../../../domain/deployments/cancel.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { PathId } from '../../shared/schemas.js';
import { DeploymentDetailSchema } from './schemas.js';

const Body = v.optional(
  v.object({ reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(1000, 'must be at most 1000 characters'))) }),
  {},
);

export const makeHandler = (deps: () => CancelDeps) =>
  http(
    {
      operationId: 'cancel_deployment',
      summary: 'Cancel a deployment that has not finished: its commands are stopped and its instance freed',
      tags: ['deployments'],
      permission: 'deployments:cancel',
      params: PathId,
      body: Body,
      responses: {
        200: {
          description: 'The deployment, state cancelled, plan null, completed_at set',
          schema: DeploymentDetailSchema,
        },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
        409: { description: 'CONFLICT: the deployment already finished' },
      },
    },
    async ({ caller, params, body }) => ({
      statusCode: 200,
      body: await cancelDeployment(deps(), caller, params.id, body.reason),
    }),
  );

export const handler = makeHandler(deploymentsDeps);
