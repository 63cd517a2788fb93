// handler -> logout -> UserRepository.revokeTokens
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { logout } from '../../../domain/identity/logout.js';
import { http } from '../../shared/http.js';
import { revokingIdentityDeps } from '../../shared/identity-wiring.js';
import { clearedRefreshCookie } from './cookies.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'logout',
      summary: 'Revoke every token of the current user',
      tags: ['auth'],
      permission: 'authenticated',
      credentials: 'user',
      responses: {
        200: { description: 'Logged out', schema: v.object({ message: v.string() }) },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
      },
    },
    async (request) => ({
      statusCode: 200,
      body: await logout(deps(), request.caller),
      cookies: [clearedRefreshCookie(request)],
    }),
  );

export const handler = makeHandler(revokingIdentityDeps);
