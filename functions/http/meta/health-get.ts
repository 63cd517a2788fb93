// handler -> checkHealth -> DependencyProbes (DynamoDB, SQS). Always 200: `status` says ok or degraded.
import { checkHealth, type HealthDeps } from '../../../domain/health/check-health.js';
import { http } from '../../shared/http.js';
import { healthDeps } from '../../shared/wiring.js';
import { HealthReportSchema } from './schemas.js';

export const makeHandler = (deps: () => HealthDeps) =>
  http(
    {
      operationId: 'health',
      summary: 'Liveness, with the state of DynamoDB and SQS',
      tags: ['meta'],
      permission: 'public',
      responses: {
        200: {
          description: 'The service answers; `status` is `degraded` when a dependency is down',
          schema: HealthReportSchema,
        },
      },
    },
    async () => ({ statusCode: 200, body: await checkHealth(deps()) }),
  );

export const handler = makeHandler(healthDeps);
