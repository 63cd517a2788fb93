// handler -> checkReadiness -> DependencyProbes. 503 SERVICE_UNAVAILABLE naming what is unreachable.
import { checkReadiness, type HealthDeps } from '../../../domain/health/check-health.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { http } from '../../shared/http.js';
import { healthDeps } from '../../shared/wiring.js';
import { HealthReportSchema } from './schemas.js';

export const makeHandler = (deps: () => HealthDeps) =>
  http(
    {
      operationId: 'readiness',
      summary: 'Readiness: every dependency reachable',
      tags: ['meta'],
      permission: 'public',
      responses: {
        200: { description: 'Ready to serve', schema: HealthReportSchema },
        503: { description: 'A dependency is unreachable (SERVICE_UNAVAILABLE)', schema: ErrorEnvelopeSchema },
      },
    },
    async () => ({ statusCode: 200, body: await checkReadiness(deps()) }),
  );

export const handler = makeHandler(healthDeps);
