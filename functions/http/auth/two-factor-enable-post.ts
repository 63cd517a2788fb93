// handler -> enableTwoFactor (domain/identity/two-factor.ts)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { enableTwoFactor } from '../../../domain/identity/two-factor.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { Code, Enabled } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'two_factor_enable',
      summary: 'Turn two-factor on with a current code',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      body: v.object({ code: Code }),
      responses: {
        200: { description: 'On, with the recovery codes (shown only here)', schema: Enabled },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
        429: {
          description:
            'AUTH_RATE_LIMIT_EXCEEDED: too many wrong codes for this account (too_many_failed_two_factor_codes)',
        },
      },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await enableTwoFactor(deps(), caller, body.code) }),
  );

export const handler = makeHandler(identityDeps);
