// handler -> createApiKey -> ApiKeyRepository (only the key's hash is stored; the full key is answered once)
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { createApiKey } from '../../../domain/identity/api-keys.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { ApiKeySchema } from './schemas.js';

const Body = v.object({
  name: v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(255)),
  description: v.optional(v.pipe(v.string(), v.maxLength(1000))),
  expires_in_days: v.optional(
    v.pipe(v.number(), v.integer('must be a whole number of days'), v.minValue(1), v.maxValue(3650)),
  ),
  scopes: v.pipe(v.array(v.string()), v.minLength(1, 'needs at least one permission name'), v.maxLength(57)),
});

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'create_api_key',
      summary: 'Create an API key (shown once); needs a user login, scopes within your permissions',
      tags: ['auth'],
      permission: 'api_keys:create',
      credentials: 'user',
      body: Body,
      responses: {
        201: {
          description: 'The key, with `full_key` shown this once',
          schema: v.object({ api_key: ApiKeySchema, full_key: v.string(), warning: v.string() }),
        },
      },
    },
    async ({ caller, body }) => ({ statusCode: 201, body: await createApiKey(deps(), caller, body) }),
  );

export const handler = makeHandler(identityDeps);
