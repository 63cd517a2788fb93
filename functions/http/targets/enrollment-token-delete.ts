// handler -> revokeEnrollmentToken (domain/targets/enrollment.ts) -> EnrollmentTokenRepository
import type { TargetsDeps } from '../../../domain/targets/deps.js';
import { revokeEnrollmentToken } from '../../../domain/targets/enrollment.js';
import { http } from '../../shared/http.js';
import { PathId } from '../../shared/schemas.js';
import { targetsDeps } from '../../shared/targets-wiring.js';

export const makeHandler = (deps: () => TargetsDeps) =>
  http(
    {
      operationId: 'revoke_enrollment_token',
      summary: 'Revoke an enrollment token; registrations with it are refused at once (targets already enrolled stay)',
      tags: ['targets'],
      permission: 'targets:delete',
      params: PathId,
      responses: { 204: { description: 'Revoked' }, 404: { description: 'NOT_FOUND (unknown, or another tenant’s)' } },
    },
    async ({ caller, params }) => {
      await revokeEnrollmentToken(deps(), caller, params.id);
      return { statusCode: 204 };
    },
  );

export const handler = makeHandler(targetsDeps);
