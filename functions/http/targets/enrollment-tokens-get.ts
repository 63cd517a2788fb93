// handler -> listEnrollmentTokens (domain/targets/enrollment.ts) -> EnrollmentTokenRepository
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { listEnrollmentTokens } from '../../../domain/targets/enrollment.js';
import { http } from '../../shared/http.js';
import { PageQuery, Paginated } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';
import { EnrollmentTokenSchema } from './schemas.js';

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'list_enrollment_tokens',
      summary:
        'Enrollment tokens, oldest first, with their uses (never the secret); a tenant-scoped caller sees its tenant’s only',
      tags: ['targets'],
      permission: 'targets:read',
      query: PageQuery(50),
      responses: { 200: { description: 'A page of enrollment tokens', schema: Paginated(EnrollmentTokenSchema) } },
    },
    async ({ caller, query }) => ({ statusCode: 200, body: await listEnrollmentTokens(deps(), caller, query) }),
  );

export const handler = makeHandler(targetsDeps);
