// handler -> the authorization server's metadata (RFC 8414), from the public base URL.
import * as v from 'valibot';
import { PERMISSIONS } from '../../../domain/identity/permissions.js';
import { http } from '../../shared/http.js';
import { oauthIssuer } from '../../shared/oauth-wiring.js';

export const metadata = (issuer: string) => ({
  issuer,
  authorization_endpoint: `${issuer}/oauth/authorize`,
  token_endpoint: `${issuer}/oauth/token`,
  jwks_uri: `${issuer}/oauth/jwks`,
  revocation_endpoint: `${issuer}/oauth/revoke`,
  introspection_endpoint: `${issuer}/oauth/introspect`,
  grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
  response_types_supported: ['code'],
  response_modes_supported: ['query'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  code_challenge_methods_supported: ['S256'],
  scopes_supported: PERMISSIONS.map((p) => p.name),
  authorization_response_iss_parameter_supported: true,
});

export const handler = http(
  {
    operationId: 'oauth_discovery',
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    tags: ['oauth'],
    permission: 'public',
    responses: { 200: { description: 'The metadata', schema: v.looseObject({ issuer: v.string() }) } },
  },
  async () => ({
    statusCode: 200,
    body: metadata(oauthIssuer()),
    headers: { 'cache-control': 'public, max-age=300' },
  }),
);
