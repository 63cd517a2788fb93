// handler -> listSignInProviders (domain/sso/providers.ts) -> IdentityProviderRepository (one query), kept 5 s
// The public list a sign-in page needs to offer "Sign in with <provider>": the enabled providers, names only. No
// credential: the OAuth sign-in page (`GET /oauth/authorize`) already shows the same names to anyone. Cheap: one
// query of the providers' partition, answered from a per-container copy for 5 s, so a flood of page loads costs
// one read per container every 5 s; a provider enabled, disabled or added shows within that time.
import * as v from 'valibot';
import { listSignInProviders } from '../../../domain/sso/providers.js';
import { http } from '../../shared/http.js';
import { cachedFor } from '../../shared/once.js';
import { providersDeps } from '../../shared/sso-wiring.js';

/** How long a container answers from its copy of the list. */
export const SIGN_IN_PROVIDERS_TTL_MS = 5_000;

export const SignInProviderSchema = v.object({
  id: v.string(),
  short_id: v.string(),
  name: v.string(),
  sign_in_url: v.string(),
});

type SignInProvider = v.InferOutput<typeof SignInProviderSchema>;

export const makeHandler = (list: () => Promise<readonly SignInProvider[]>) =>
  http(
    {
      operationId: 'list_sign_in_providers',
      summary:
        'The identity providers a sign-in page may offer (public): the enabled ones, id, name and sign-in link only',
      tags: ['auth'],
      permission: 'public',
      responses: {
        200: {
          description: 'The enabled providers, oldest first; add `?return_to=<path>` to a sign_in_url',
          schema: v.object({ data: v.array(SignInProviderSchema) }),
        },
      },
    },
    async () => ({ statusCode: 200, body: { data: [...(await list())] } }),
  );

export const handler = makeHandler(
  cachedFor(
    SIGN_IN_PROVIDERS_TTL_MS,
    () => Date.now(),
    () => listSignInProviders(providersDeps()),
  ),
);
