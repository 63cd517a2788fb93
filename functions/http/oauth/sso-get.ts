// handler -> openRequest (the page's sealed request and CSRF cookie) -> startSsoSignIn (domain/sso/sign-in.ts)
// GET /oauth/sso/{provider}?request=...: "Sign in with <provider>" on the authorization page. Starts the provider's
// sign-in with the way back to this page (/oauth/authorize/sso); the SSO callback hands the page a sealed proof of
// who signed in instead of starting an API session.
import * as v from 'valibot';
import { DomainError } from '../../../domain/errors.js';
import type { AuthorizationDeps } from '../../../domain/oauth/authorization.js';
import type { SealedNotes } from '../../../domain/oauth/ports.js';
import { startSsoSignIn, type SsoDeps } from '../../../domain/sso/sign-in.js';
import { http } from '../../shared/http.js';
import { oauthIssuer, oauthNotes, oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { ssoDeps } from '../../shared/sso-wiring.js';
import { ssoCookie } from '../auth/cookies.js';
import { openRequest, SSO_RETURN_PATH, StalePage } from './authorize-flow.js';
import { errorPage } from './pages.js';

const Params = v.object({ provider: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

export const makeHandler = (deps: () => AuthorizationDeps, notes: () => SealedNotes, sso: () => SsoDeps) =>
  http(
    {
      operationId: 'oauth_sso_sign_in',
      summary: 'The authorization page’s “Sign in with …”: to the identity provider, back to the page afterwards',
      tags: ['oauth'],
      permission: 'public',
      limiterDown: 'refuse',
      params: Params,
      responses: {
        302: { description: 'To the provider (authorization code, PKCE, state, nonce); sets the binding cookie' },
        400: {
          description: 'A page: an expired page, unknown or disabled provider',
          contentType: 'text/html',
          schema: v.string(),
        },
      },
    },
    async (request) => {
      try {
        const sealed = new URLSearchParams(request.rawQuery ?? '').get('request') ?? undefined;
        await openRequest(notes(), deps().random, request, sealed, oauthIssuer());
        const started = await startSsoSignIn(sso(), {
          provider: request.params.provider,
          returnTo: `${SSO_RETURN_PATH}?${new URLSearchParams({ request: sealed! })}`,
        });
        return {
          statusCode: 302,
          headers: { location: started.location, 'cache-control': 'no-store' },
          cookies: [ssoCookie(request, started.binding, started.expiresAt)],
        };
      } catch (error) {
        if (error instanceof StalePage) return errorPage(400, error.message);
        if (error instanceof DomainError) return errorPage(400, error.message);
        throw error;
      }
    },
  );

export const handler = makeHandler(oauthTokenDeps, oauthNotes, ssoDeps);
