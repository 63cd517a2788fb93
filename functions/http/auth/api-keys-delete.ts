// handler -> revokeApiKey -> ApiKeyRepository
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { revokeApiKey } from '../../../domain/identity/api-keys.js';
import { http } from '../../shared/http.js';
import { Uuid } from '../../shared/schemas.js';
import { revokingIdentityDeps } from '../../shared/identity-wiring.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'revoke_api_key',
      summary: 'Revoke one of your API keys',
      tags: ['auth'],
      permission: 'api_keys:delete',
      credentials: 'user',
      params: v.object({ id: Uuid }),
      responses: {
        200: { description: 'Revoked', schema: v.object({ message: v.string() }) },
        404: { description: 'No such key of yours' },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
      },
    },
    async ({ caller, params }) => ({ statusCode: 200, body: await revokeApiKey(deps(), caller, params.id) }),
  );

export const handler = makeHandler(revokingIdentityDeps);
