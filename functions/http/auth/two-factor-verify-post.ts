// handler -> verifyTwoFactor (domain/identity/two-factor.ts)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { verifyTwoFactor } from '../../../domain/identity/two-factor.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { refreshCookie } from './cookies.js';
import { SessionSchema, SignInCode } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'two_factor_verify',
      summary: 'Complete a login that answered requires_2fa',
      tags: ['auth'],
      permission: 'public',
      limiterDown: 'refuse',
      body: v.object({ code: SignInCode, pending_token: v.pipe(v.string(), v.minLength(1, 'is required')) }),
      responses: {
        200: { description: 'A session, as login answers it', schema: SessionSchema },
        401: {
          description:
            'INVALID_CREDENTIALS (wrong or reused code or recovery code), INVALID_TOKEN (also a pending token used once or after 5 attempts), TOKEN_EXPIRED',
          schema: ErrorEnvelopeSchema,
        },
        429: {
          description:
            'AUTH_RATE_LIMIT_EXCEEDED: this address (too_many_failed_logins) or this account (too_many_failed_two_factor_codes)',
          schema: ErrorEnvelopeSchema,
        },
      },
    },
    async (request) => {
      const session = await verifyTwoFactor(deps(), {
        code: request.body.code,
        pendingToken: request.body.pending_token,
        ip: request.sourceIp,
      });
      return {
        statusCode: 200,
        body: session.body,
        cookies: [refreshCookie(request, session.refreshToken, session.refreshExpiresAt)],
      };
    },
  );

export const handler = makeHandler(identityDeps);
