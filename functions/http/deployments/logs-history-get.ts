// handler -> deploymentLogHistory (domain/deployments/log-history.ts) -> DeploymentRepository, DeploymentEventStore
import * as v from 'valibot';
import {
  deploymentLogHistory,
  HISTORY_DEFAULT_LIMIT,
  type LogHistoryDeps,
} from '../../../domain/deployments/log-history.js';
import { deploymentsDeps } from '../../shared/deployments-wiring.js';
import { http } from '../../shared/http.js';
import { LimitQuery, PathId, QueryInt } from '../../shared/schemas.js';
import { deploymentEvents } from '../../shared/stream-wiring.js';
import { HistoryEntrySchema } from './schemas.js';

const Query = v.object({
  offset: QueryInt({ min: 0, max: 1_000_000_000, default: 0 }),
  limit: LimitQuery(HISTORY_DEFAULT_LIMIT),
});

export const makeHandler = (deps: () => LogHistoryDeps) =>
  http(
    {
      operationId: 'get_deployment_log_history',
      summary:
        'The deployment’s log, progress, step and state events as historical log entries, oldest first (offset/limit)',
      tags: ['deployments'],
      permission: 'deployments:read',
      params: PathId,
      query: Query,
      responses: {
        200: {
          description: 'A bare array of historical log entries, chronological; timestamps with a +00:00 offset',
          schema: v.array(HistoryEntrySchema),
        },
        404: { description: 'NOT_FOUND (also another tenant’s)' },
      },
    },
    async ({ caller, params, query }) => ({
      statusCode: 200,
      body: await deploymentLogHistory(deps(), caller, params.id, query),
    }),
  );

export const handler = makeHandler(() => ({
  deployments: deploymentsDeps().deployments,
  events: deploymentEvents(),
  clock: deploymentsDeps().clock,
}));
