// handler -> changePassword -> UserRepository, LoginThrottle, PasswordHasher, SessionRepository
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { changePassword } from '../../../domain/identity/change-password.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { revokingIdentityDeps } from '../../shared/identity-wiring.js';
import { refreshCookie } from './cookies.js';
import { SessionSchema } from './schemas.js';

const Body = v.object({
  current_password: v.pipe(v.string(), v.minLength(1, 'is required'), v.maxLength(1024)),
  new_password: v.pipe(v.string(), v.minLength(8, 'must be at least 8 characters'), v.maxLength(1024)),
});

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'change_password',
      summary:
        'Change your password with the current one: every other session ends; answers a new session for this one (and its refresh cookie)',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      limiterDown: 'refuse',
      body: Body,
      responses: {
        200: { description: 'A new session; every earlier token of the account is revoked', schema: SessionSchema },
        400: { description: 'VALIDATION_ERROR: a wrong current password, or a new one too short or unchanged' },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
        409: { description: 'CONFLICT: an account without a local password (signs in through its identity provider)' },
        429: { description: 'AUTH_RATE_LIMIT_EXCEEDED', schema: ErrorEnvelopeSchema },
      },
    },
    async (request) => {
      const session = await changePassword(deps(), request.caller, {
        currentPassword: request.body.current_password,
        newPassword: request.body.new_password,
        ip: request.sourceIp,
      });
      return {
        statusCode: 200,
        body: session.body,
        cookies: [refreshCookie(request, session.refreshToken, session.refreshExpiresAt)],
      };
    },
  );

export const handler = makeHandler(revokingIdentityDeps);
