// handler -> previewDeployment (domain/deployments/plan/preview.ts) -> catalog, target, tenancy repositories, SecretCipher
import type { PlanDeps } from '../../../domain/deployments/plan/command.js';
import { previewDeployment } from '../../../domain/deployments/plan/preview.js';
import { previewDeps } from '../../shared/deployments-plan-wiring.js';
import { http } from '../../shared/http.js';
import { CreateDeploymentBody, DeploymentPreviewSchema } from './schemas.js';

export const makeHandler = (deps: () => PlanDeps) =>
  http(
    {
      operationId: 'preview_deployment',
      summary: 'Resolve a create body into its plan, warnings, target summary and variables, without creating anything',
      tags: ['deployments'],
      permission: 'deployments:create',
      body: CreateDeploymentBody,
      responses: {
        200: {
          description:
            'The plan, warnings (offline or stale targets, freezes, ...), target summary, variables (secrets masked) and the source',
          schema: DeploymentPreviewSchema,
        },
        403: { description: 'FORBIDDEN: another tenant; INSUFFICIENT_PERMISSIONS: no deployments:create' },
      },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await previewDeployment(deps(), caller, body) }),
  );

export const handler = makeHandler(previewDeps);
