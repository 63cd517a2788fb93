// handler -> authenticateClient, introspectToken (domain/oauth/tokens.ts) -> TokenService, TokenRevocations
// POST /oauth/introspect (RFC 7662): a client learns about its own tokens; anything else is `active: false`.
import * as v from 'valibot';
import { introspectRefreshToken, refreshTokenOf, type AuthorizationDeps } from '../../../domain/oauth/authorization.js';
import { introspectToken } from '../../../domain/oauth/tokens.js';
import { http } from '../../shared/http.js';
import { oauthIssuer, oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { clientAndToken, NO_STORE, oauthAnswer, rfcError } from './oauth-http.js';

export const makeHandler = (deps: () => AuthorizationDeps) =>
  http(
    {
      operationId: 'oauth_introspect',
      summary: 'OAuth 2.0 token introspection (RFC 7662), client-authenticated, form-encoded `token`',
      tags: ['oauth'],
      permission: 'public',
      responses: {
        200: {
          description: 'Whether the token is active, and its claims when it is',
          schema: v.looseObject({ active: v.boolean() }),
        },
        400: rfcError('RFC 6749 5.2 error'),
        401: rfcError('invalid_client'),
      },
    },
    ({ headers, rawBody }) =>
      oauthAnswer(async () => {
        const { client, token } = await clientAndToken(deps(), headers, rawBody);
        const refresh = await refreshTokenOf(deps(), client, token);
        return {
          statusCode: 200,
          body:
            refresh === undefined
              ? await introspectToken(deps(), client, token, oauthIssuer())
              : await introspectRefreshToken(deps(), refresh, oauthIssuer()),
          headers: NO_STORE,
        };
      }),
  );

export const handler = makeHandler(oauthTokenDeps);
