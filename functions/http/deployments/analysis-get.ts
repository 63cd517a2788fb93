// handler -> commandResults (domain/deployments/command-results.ts) -> DeploymentRepository, CommandRepository
import * as v from 'valibot';
import { commandResults, type CommandResultsDeps } from '../../../domain/deployments/command-results.js';
import { http } from '../../shared/http.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { PathId } from '../../shared/schemas.js';

const CommandResultSchema = v.object({
  id: v.string(),
  target_id: v.string(),
  status: v.string(),
  started_at: v.nullable(v.string()),
  completed_at: v.nullable(v.string()),
  duration_ms: v.nullable(v.number()),
  target_name: v.optional(v.string()),
  action_name: v.optional(v.string()),
  exit_code: v.optional(v.number()),
  stdout_tail: v.optional(v.string()),
  stderr_tail: v.optional(v.string()),
  error_message: v.optional(v.string()),
  /** Failed commands only, once the failure analysis produced it. */
  analysis: v.optional(
    v.object({
      confidence: v.number(),
      summary: v.string(),
      likely_cause: v.string(),
      remediation: v.array(v.string()),
      analyzed_at: v.string(),
      model_version: v.string(),
    }),
  ),
});

export const makeHandler = (deps: () => CommandResultsDeps) =>
  http(
    {
      operationId: 'get_deployment_analysis',
      summary:
        'Command results of a deployment, by start time, with the last 2000 characters of stdout and stderr and the failure analysis of failed ones',
      tags: ['deployments'],
      permission: 'deployments:read',
      params: PathId,
      responses: {
        200: { description: 'Command results', schema: v.array(CommandResultSchema) },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await commandResults(deps(), caller, params.id) }),
  );

export const handler = makeHandler(deploymentsDeps);
