// handler -> authenticateTokenClient, revokeToken / revokeRefreshToken (domain/oauth) -> TokenRevocations
// POST /oauth/revoke (RFC 7009): 200 for a token the client holds (now revoked) and for any other token alike;
// a refresh token revokes its whole grant. Public clients may revoke their own tokens.
import { refreshTokenOf, revokeRefreshToken, type AuthorizationDeps } from '../../../domain/oauth/authorization.js';
import { revokeToken } from '../../../domain/oauth/tokens.js';
import { http } from '../../shared/http.js';
import { oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { clientAndToken, NO_STORE, oauthAnswer, rfcError } from './oauth-http.js';

export const makeHandler = (deps: () => AuthorizationDeps) =>
  http(
    {
      operationId: 'oauth_revoke',
      summary: 'OAuth 2.0 token revocation (RFC 7009), client-authenticated, form-encoded `token`',
      tags: ['oauth'],
      permission: 'public',
      responses: {
        200: { description: 'Revoked, or not a token of this client (the same answer)' },
        400: rfcError('RFC 6749 5.2 error'),
        401: rfcError('invalid_client'),
      },
    },
    ({ headers, rawBody }) =>
      oauthAnswer(async () => {
        const { client, token } = await clientAndToken(deps(), headers, rawBody, 'allowed');
        const refresh = await refreshTokenOf(deps(), client, token);
        if (refresh !== undefined) await revokeRefreshToken(deps(), refresh);
        else await revokeToken(deps(), client, token);
        return { statusCode: 200, body: {}, headers: NO_STORE };
      }),
  );

export const handler = makeHandler(oauthTokenDeps);
