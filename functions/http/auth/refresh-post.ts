// handler -> refreshSession -> SessionRepository (rotation, reuse detection), UserRepository, TokenService
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { refreshSession } from '../../../domain/identity/refresh-session.js';
import { InvalidTokenError } from '../../../domain/identity/errors.js';
import { renderError } from '../../shared/errors.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { clearedRefreshCookie, REFRESH_COOKIE, refreshCookie } from './cookies.js';
import { SessionSchema } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'refresh',
      summary: 'A new access token from the refresh-token cookie, which is rotated',
      tags: ['auth'],
      permission: 'public',
      limiterDown: 'refuse',
      responses: {
        200: { description: 'A new access token; the cookie is replaced', schema: SessionSchema },
        401: {
          description: 'INVALID_TOKEN: no, an expired, revoked or reused refresh token',
          schema: ErrorEnvelopeSchema,
        },
      },
    },
    async (request) => {
      try {
        const session = await refreshSession(deps(), request.cookies[REFRESH_COOKIE]);
        return {
          statusCode: 200,
          body: session.body,
          cookies: [refreshCookie(request, session.refreshToken, session.refreshExpiresAt)],
        };
      } catch (error) {
        if (!(error instanceof InvalidTokenError)) throw error;
        // Answer the error and drop the dead cookie in the same response.
        const rendered = renderError(error, request.requestId);
        return { statusCode: rendered.statusCode, body: rendered.body, cookies: [clearedRefreshCookie(request)] };
      }
    },
  );

export const handler = makeHandler(identityDeps);
