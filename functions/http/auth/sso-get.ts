// handler -> startSsoSignIn (domain/sso/sign-in.ts) -> IdentityProviderRepository, SignInStates
import * as v from 'valibot';
import { startSsoSignIn, type SsoDeps } from '../../../domain/sso/sign-in.js';
import { http } from '../../shared/http.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { ssoDeps } from '../../shared/sso-wiring.js';
import { ssoCookie } from './cookies.js';

const Params = v.object({ provider: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });
const Query = v.object({ return_to: v.optional(v.pipe(v.string(), v.maxLength(2000))) });

export const makeHandler = (deps: () => SsoDeps) =>
  http(
    {
      operationId: 'sso_sign_in',
      summary: 'Sign in with an identity provider: redirects to it (authorization code, PKCE S256, state, nonce)',
      tags: ['auth'],
      permission: 'public',
      limiterDown: 'refuse',
      params: Params,
      query: Query,
      responses: {
        302: { description: 'To the provider’s authorization endpoint; sets the short-lived binding cookie' },
        400: {
          description: 'VALIDATION_ERROR: return_to is not a relative path on this site',
          schema: ErrorEnvelopeSchema,
        },
        403: { description: 'FORBIDDEN: the provider is disabled', schema: ErrorEnvelopeSchema },
        404: { description: 'NOT_FOUND: no such provider', schema: ErrorEnvelopeSchema },
      },
    },
    async (request) => {
      const started = await startSsoSignIn(deps(), {
        provider: request.params.provider,
        returnTo: request.query.return_to,
      });
      return {
        statusCode: 302,
        body: undefined,
        headers: { location: started.location, 'cache-control': 'no-store' },
        cookies: [ssoCookie(request, started.binding, started.expiresAt)],
      };
    },
  );

export const handler = makeHandler(ssoDeps);
