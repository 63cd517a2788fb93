// handler -> getMe -> UserRepository
import * as v from 'valibot';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { getMe } from '../../../domain/identity/get-me.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { UserViewSchema } from './schemas.js';

const Me = v.object({
  ...UserViewSchema.entries,
  email_verified: v.boolean(),
  last_login_at: v.nullable(v.string()),
  tenant_id: v.nullable(v.string()),
  two_factor_enabled: v.boolean(),
  /** Unused two-factor recovery codes (0 while 2FA is off); the codes themselves are shown only when issued. */
  two_factor_recovery_codes_left: v.number(),
  /** Which credential the call used; null for a user session (then `roles` and `permissions` are the user's own). */
  credential: v.nullable(
    v.object({
      type: v.picklist(['api_key', 'oauth_token']),
      id: v.string(),
      name: v.nullable(v.string()),
      scopes: v.array(v.string()),
    }),
  ),
});

export const makeHandler = (deps: () => IdentityDeps) =>
  http(
    {
      operationId: 'me',
      summary: 'The current user; for an API key or OAuth token, what it acts with and which credential it is',
      tags: ['auth'],
      permission: 'authenticated',
      responses: { 200: { description: 'The current user', schema: Me } },
    },
    async ({ caller }) => ({ statusCode: 200, body: await getMe(deps(), caller) }),
  );

export const handler = makeHandler(identityDeps);
