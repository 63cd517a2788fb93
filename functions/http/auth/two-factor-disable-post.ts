// handler -> disableTwoFactor (domain/identity/two-factor.ts)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { disableTwoFactor } from '../../../domain/identity/two-factor.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { Code, Toggled } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'two_factor_disable',
      summary: 'Turn two-factor off with a current code',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      body: v.object({ code: Code }),
      responses: {
        200: { description: 'Off', schema: Toggled },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
        429: {
          description:
            'AUTH_RATE_LIMIT_EXCEEDED: too many wrong codes for this account (too_many_failed_two_factor_codes)',
        },
      },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await disableTwoFactor(deps(), caller, body.code) }),
  );

export const handler = makeHandler(identityDeps);
