// handler -> regenerateRecoveryCodes (domain/identity/two-factor.ts)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { regenerateRecoveryCodes } from '../../../domain/identity/two-factor.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { Code, RecoveryCodesIssued } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'two_factor_recovery_codes',
      summary: 'Replace every two-factor recovery code, with a current authenticator code',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      body: v.object({ code: Code }),
      responses: {
        200: {
          description: 'The new codes (shown only here); the earlier ones no longer work',
          schema: RecoveryCodesIssued,
        },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
        409: { description: 'CONFLICT: two-factor authentication is not on' },
        429: {
          description:
            'AUTH_RATE_LIMIT_EXCEEDED: too many wrong codes for this account (too_many_failed_two_factor_codes)',
        },
      },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await regenerateRecoveryCodes(deps(), caller, body.code) }),
  );

export const handler = makeHandler(identityDeps);
