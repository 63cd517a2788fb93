// handler -> endSession -> SessionRepository.revokeFamily (this browser's refresh-token family only). Not refused
// when the rate limiter's store is down (unlike login and refresh): signing out only takes access away.
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { endSession } from '../../../domain/identity/end-session.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { clearedRefreshCookie, REFRESH_COOKIE } from './cookies.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'end_session',
      summary:
        'Sign out of this browser: revokes the refresh-token cookie’s session only and clears the cookie (other ' +
        'sessions keep working; the access token lives to its expiry). Not in the shared spec',
      tags: ['auth'],
      permission: 'public',
      responses: {
        200: {
          description: 'This browser’s session is ended (also when there was none); the cookie is cleared',
          schema: v.object({ message: v.string() }),
        },
      },
    },
    async (request) => ({
      statusCode: 200,
      body: await endSession(deps(), request.cookies[REFRESH_COOKIE]),
      cookies: [clearedRefreshCookie(request)],
    }),
  );

export const handler = makeHandler(identityDeps);
