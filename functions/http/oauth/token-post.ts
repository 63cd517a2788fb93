// handler -> authenticateTokenClient, the grants (domain/oauth/{tokens,authorization}.ts) -> OAuthClientRepository,
// OAuthGrantStore, TokenService
// POST /oauth/token (RFC 6749 section 3.2): form body, client_secret_basic or client_secret_post, RFC error answers.
import * as v from 'valibot';
import {
  authenticateTokenClient,
  authorizationCodeGrant,
  refreshTokenGrant,
  type AuthorizationDeps,
} from '../../../domain/oauth/authorization.js';
import { clientCredentialsGrant, OAuthError, throttleClient } from '../../../domain/oauth/tokens.js';
import { http } from '../../shared/http.js';
import { oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { clientCredentialsOf, formOf, NO_STORE, oauthAnswer, rfcError } from './oauth-http.js';

const unsupported = (grantType: string): never => {
  throw new OAuthError('unsupported_grant_type', `The grant type ${grantType} is not supported.`);
};

const unauthorizedPublic = (): never => {
  throw new OAuthError('invalid_client', 'Client authentication failed.');
};

export const makeHandler = (deps: () => AuthorizationDeps) =>
  http(
    {
      operationId: 'oauth_token',
      summary:
        'OAuth 2.0 token endpoint (RFC 6749): client_credentials, authorization_code (PKCE S256), refresh_token; form-encoded',
      tags: ['oauth'],
      permission: 'public',
      responses: {
        200: {
          description: 'An access token (a JWT signed with the keys of /oauth/jwks)',
          schema: v.object({
            access_token: v.string(),
            token_type: v.literal('Bearer'),
            expires_in: v.number(),
            scope: v.string(),
            refresh_token: v.optional(v.string()),
          }),
        },
        400: rfcError('RFC 6749 5.2 error'),
        401: rfcError('invalid_client'),
        429: rfcError('temporarily_unavailable: 5 token requests a second per client, bursts of 20'),
      },
    },
    ({ headers, rawBody }) =>
      oauthAnswer(async () => {
        const form = formOf(headers, rawBody);
        const grantType = form.get('grant_type');
        if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required.');
        const client = await authenticateTokenClient(deps(), clientCredentialsOf(headers, form));
        await throttleClient(deps(), client);
        const body =
          grantType === 'client_credentials'
            ? client.isConfidential
              ? await clientCredentialsGrant(deps(), client, form.get('scope'))
              : unauthorizedPublic()
            : grantType === 'authorization_code'
              ? await authorizationCodeGrant(deps(), client, {
                  code: form.get('code'),
                  redirectUri: form.get('redirect_uri'),
                  codeVerifier: form.get('code_verifier'),
                })
              : grantType === 'refresh_token'
                ? await refreshTokenGrant(deps(), client, {
                    refreshToken: form.get('refresh_token'),
                    scope: form.get('scope'),
                  })
                : unsupported(grantType);
        return { statusCode: 200, body, headers: NO_STORE };
      }),
  );

export const handler = makeHandler(oauthTokenDeps);
