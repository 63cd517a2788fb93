// handler -> authenticateClient, revokeToken (domain/oauth/tokens.ts) -> TokenRevocations
// POST /oauth/revoke (RFC 7009): 200 for a token the client holds (now revoked) and for any other token alike.
import * as v from 'valibot';
import { revokeToken, type OAuthTokenDeps } from '../../../domain/oauth/tokens.js';
import { http } from '../../shared/http.js';
import { oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { clientAndToken, NO_STORE, oauthAnswer } from './oauth-http.js';

export const makeHandler = (deps: () => OAuthTokenDeps) =>
  http(
    {
      operationId: 'oauth_revoke',
      summary: 'OAuth 2.0 token revocation (RFC 7009), client-authenticated, form-encoded `token`',
      tags: ['oauth'],
      permission: 'public',
      responses: {
        200: { description: 'Revoked, or not a token of this client (the same answer)' },
        400: { description: 'RFC 6749 5.2 error', schema: v.object({ error: v.string() }) },
        401: { description: 'invalid_client', schema: v.object({ error: v.string() }) },
      },
    },
    ({ headers, rawBody }) =>
      oauthAnswer(async () => {
        const { client, token } = await clientAndToken(deps(), headers, rawBody);
        await revokeToken(deps(), client, token);
        return { statusCode: 200, body: {}, headers: NO_STORE };
      }),
  );

export const handler = makeHandler(oauthTokenDeps);
