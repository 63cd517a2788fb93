// handler -> enableTwoFactor (domain/identity/two-factor.ts)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { enableTwoFactor } from '../../../domain/identity/two-factor.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { Code, Toggled } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'two_factor_enable',
      summary: 'Turn two-factor on with a current code',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      body: v.object({ code: Code }),
      responses: { 200: { description: 'On', schema: Toggled } },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await enableTwoFactor(deps(), caller, body.code) }),
  );

export const handler = makeHandler(identityDeps);
