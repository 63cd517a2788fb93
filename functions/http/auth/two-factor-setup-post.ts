// handler -> setupTwoFactor (domain/identity/two-factor.ts)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { setupTwoFactor } from '../../../domain/identity/two-factor.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'two_factor_setup',
      summary: 'Start two-factor setup: a new TOTP secret and its otpauth:// URL (not active until enabled)',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      responses: {
        200: { description: 'The secret', schema: v.object({ secret: v.string(), otpauth_url: v.string() }) },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
      },
    },
    async ({ caller }) => ({ statusCode: 200, body: await setupTwoFactor(deps(), caller) }),
  );

export const handler = makeHandler(identityDeps);
