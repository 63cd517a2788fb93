// handler -> createDeployment (domain/deployments/create.ts) -> plan, freezes, Orchestration, PendingRequestRepository
import { createAnswerBody, createDeployment, type CreateDeps } from '../../../domain/deployments/create.js';
import { http } from '../../shared/http.js';
import { createDeps } from '../../shared/deployments-wiring.js';
import {
  CreateDeploymentBody,
  DeploymentDryRunSchema,
  DeploymentQueuedSchema,
  DeploymentStartedSchema,
} from './schemas.js';

export const makeHandler = (deps: () => CreateDeps) =>
  http(
    {
      operationId: 'create_deployment',
      summary: 'Create a deployment: started at once on a free orchestration instance (201), else queued (202)',
      tags: ['deployments'],
      permission: 'deployments:create',
      idempotent: true,
      keyClaims: true,
      body: CreateDeploymentBody,
      responses: {
        200: { description: 'dry_run: the plan, nothing created', schema: DeploymentDryRunSchema },
        201: { description: 'Started', schema: DeploymentStartedSchema },
        202: { description: 'Queued: a pending dispatch request', schema: DeploymentQueuedSchema },
        409: { description: 'DEPLOYMENT_FROZEN: an active freeze blocks it (details.active_freezes, can_override)' },
      },
    },
    async ({ caller, body, keyed }) => {
      const answer = await createDeployment(deps(), caller, body, keyed);
      if (answer.kind === 'dry_run') return { statusCode: 200, body: answer.body };
      return { statusCode: answer.kind === 'started' ? 201 : 202, body: createAnswerBody(answer.outcome) };
    },
  );

export const handler = makeHandler(createDeps);
