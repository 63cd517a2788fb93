// handler -> listApiKeys -> ApiKeyRepository (the caller's own, unrevoked keys; never the key values)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { listApiKeys } from '../../../domain/identity/api-keys.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { ApiKeySchema } from './schemas.js';

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'list_api_keys',
      summary: 'Your API keys',
      tags: ['auth'],
      permission: 'api_keys:read',
      credentials: 'user',
      responses: {
        200: { description: 'Your keys', schema: v.object({ api_keys: v.array(ApiKeySchema) }) },
        403: { description: 'FORBIDDEN (user_credentials_required): an API key' },
      },
    },
    async ({ caller }) => ({ statusCode: 200, body: await listApiKeys(deps(), caller) }),
  );

export const handler = makeHandler(identityDeps);
