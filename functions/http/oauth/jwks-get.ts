// handler -> the signing keys' public halves (RFC 7517 JWK Set).
import * as v from 'valibot';
import { http } from '../../shared/http.js';
import { tokenService } from '../../shared/identity-wiring.js';

export const handler = http(
  {
    operationId: 'oauth_jwks',
    summary: 'Public keys of the service’s token signatures (JWK Set)',
    tags: ['oauth'],
    permission: 'public',
    responses: {
      200: { description: 'JWK Set', schema: v.object({ keys: v.array(v.record(v.string(), v.unknown())) }) },
    },
  },
  async () => ({
    statusCode: 200,
    body: await tokenService().jwks(),
    headers: { 'cache-control': 'public, max-age=300' },
  }),
);
