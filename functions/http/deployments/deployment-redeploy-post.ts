// handler -> redeployDeployment (domain/deployments/create.ts) -> plan, Orchestration, PendingRequestRepository
import { createAnswerBody, redeployDeployment, type CreateDeps } from '../../../domain/deployments/create.js';
import { deploymentDetailView } from '../../../domain/deployments/views.js';
import { http } from '../../shared/http.js';
import { createDeps } from '../../shared/deployments-wiring.js';
import { PathId } from '../../shared/schemas.js';
import { DeploymentDetailSchema, DeploymentQueuedSchema, RedeployBody } from './schemas.js';

export const makeHandler = (deps: () => CreateDeps) =>
  http(
    {
      operationId: 'redeploy_deployment',
      summary: 'Deploy again with the original configuration; given fields override it (variables are merged)',
      tags: ['deployments'],
      permission: 'deployments:redeploy',
      idempotent: true,
      keyClaims: true,
      params: PathId,
      body: RedeployBody,
      responses: {
        201: {
          description: 'The new deployment (no envelope), source_deployment_id set, plan null',
          schema: DeploymentDetailSchema,
        },
        202: { description: 'Queued: every instance is busy', schema: DeploymentQueuedSchema },
        404: { description: 'NOT_FOUND' },
        409: { description: 'DEPLOYMENT_FROZEN' },
      },
    },
    async ({ caller, params, body, keyed }) => {
      const outcome = await redeployDeployment(deps(), caller, params.id, body ?? {}, keyed);
      return outcome.kind === 'started'
        ? { statusCode: 201, body: deploymentDetailView(outcome.deployment, { plan: false }) }
        : { statusCode: 202, body: createAnswerBody(outcome) };
    },
  );

export const handler = makeHandler(createDeps);
