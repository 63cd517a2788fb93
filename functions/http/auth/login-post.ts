// handler -> login -> UserRepository, LoginThrottle, PasswordHasher, TokenService, SessionRepository
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { login } from '../../../domain/identity/login.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { bootstrapAdminOnce, identityDeps } from '../../shared/identity-wiring.js';
import { refreshCookie } from './cookies.js';
import { Email, SessionSchema, TwoFactorPendingSchema } from './schemas.js';

const Body = v.object({ email: Email, password: v.pipe(v.string(), v.minLength(1, 'is required'), v.maxLength(1024)) });

export const makeHandler = (deps: () => IdentityDeps, bootstrap: () => Promise<void> = async () => undefined) =>
  http(
    {
      operationId: 'login',
      summary: 'Log in with email and password; sets the refresh-token cookie',
      tags: ['auth'],
      permission: 'public',
      limiterDown: 'refuse',
      body: Body,
      responses: {
        200: {
          description: 'A session, or `requires_2fa` with a pending token',
          schema: v.union([SessionSchema, TwoFactorPendingSchema]),
        },
        401: { description: 'INVALID_CREDENTIALS', schema: ErrorEnvelopeSchema },
        429: { description: 'AUTH_RATE_LIMIT_EXCEEDED', schema: ErrorEnvelopeSchema },
      },
    },
    async (request) => {
      await bootstrap();
      const outcome = await login(deps(), { ...request.body, ip: request.sourceIp });
      if (outcome.kind === 'two_factor') return { statusCode: 200, body: outcome.body };
      return {
        statusCode: 200,
        body: outcome.body,
        cookies: [refreshCookie(request, outcome.refreshToken, outcome.refreshExpiresAt)],
      };
    },
  );

export const handler = makeHandler(identityDeps, bootstrapAdminOnce);
