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
      responses: { 200: { description: 'Off', schema: Toggled } },
    },
    async ({ caller, body }) => ({ statusCode: 200, body: await disableTwoFactor(deps(), caller, body.code) }),
  );

export const handler = makeHandler(identityDeps);
