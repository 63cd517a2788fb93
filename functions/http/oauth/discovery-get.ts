// handler -> the authorization server's metadata (RFC 8414), from the public base URL.
import * as v from 'valibot';
import { PERMISSIONS } from '../../../domain/identity/permissions.js';
import { http } from '../../shared/http.js';
import { oauthIssuer } from '../../shared/oauth-wiring.js';

export const metadata = (issuer: string) => ({
  issuer,
  token_endpoint: `${issuer}/oauth/token`,
  jwks_uri: `${issuer}/oauth/jwks`,
  revocation_endpoint: `${issuer}/oauth/revoke`,
  introspection_endpoint: `${issuer}/oauth/introspect`,
  grant_types_supported: ['client_credentials'],
  response_types_supported: [],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
  code_challenge_methods_supported: ['S256'],
  scopes_supported: PERMISSIONS.map((p) => p.name),
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
