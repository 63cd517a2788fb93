// handler -> listDeployments (domain/deployments/queries.ts) -> DeploymentRepository
import * as v from 'valibot';
import type { DeploymentsDeps } from '../../../domain/deployments/deps.js';
import { listDeployments, STATUS_BUCKETS } from '../../../domain/deployments/queries.js';
import { DEPLOYMENT_STATES } from '../../../domain/deployments/types.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { PageQuery, Uuid } from '../../shared/schemas.js';
import { DeploymentListSchema } from './schemas.js';

const STATUSES = [...(Object.keys(STATUS_BUCKETS) as (keyof typeof STATUS_BUCKETS)[]), ...DEPLOYMENT_STATES] as const;

const Query = v.object({
  ...PageQuery(50).entries,
  tenant_id: v.optional(Uuid),
  status: v.optional(v.picklist(STATUSES, `must be one of ${STATUSES.join(', ')}`)),
  environment_id: v.optional(Uuid),
  source_type: v.optional(v.picklist(['solution', 'sequence', 'action'], 'must be one of solution, sequence, action')),
  triggered_by: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
});

export const makeHandler = (deps: () => Pick<DeploymentsDeps, 'deployments'>) =>
  http(
    {
      operationId: 'list_deployments',
      summary: 'Deployments, newest first, with status_counts over every page (ignoring the status filter)',
      tags: ['deployments'],
      permission: 'deployments:read',
      query: Query,
      responses: {
        200: { description: 'The deployment list envelope: {data, meta, status_counts}', schema: DeploymentListSchema },
      },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listDeployments(deps(), caller, query) }),
  );

export const handler = makeHandler(deploymentsDeps);
