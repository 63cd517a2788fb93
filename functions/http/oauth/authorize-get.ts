// handler -> checkAuthorizationRequest (domain/oauth/authorization.ts) -> OAuthClientRepository; the sign-in page.
// GET /oauth/authorize (RFC 6749 4.1.1): an unknown client or unregistered redirect URI is shown on a page; other
// problems go back to the redirect URI as errors; a good request gets the sign-in form, with the request sealed into
// it and a CSRF cookie. Nothing is written until the user approves.
import * as v from 'valibot';
import { checkAuthorizationRequest, type AuthorizationDeps } from '../../../domain/oauth/authorization.js';
import type { SealedNotes } from '../../../domain/oauth/ports.js';
import { listSignInProviders } from '../../../domain/sso/providers.js';
import { http } from '../../shared/http.js';
import { oauthIssuer, oauthNotes, oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { providersDeps } from '../../shared/sso-wiring.js';
import { csrfCookie, responseUri, sealRequest } from './authorize-flow.js';
import { errorPage, loginPage, redirectTo } from './pages.js';

/** The identity providers a user may sign in with on the page: the public list's (the enabled ones). */
export const signInProviders = async (): Promise<{ id: string; name: string }[]> =>
  (await listSignInProviders(providersDeps())).map((p) => ({ id: p.id, name: p.name }));

export const makeHandler = (
  deps: () => AuthorizationDeps,
  notes: () => SealedNotes,
  providers: () => Promise<readonly { id: string; name: string }[]> = async () => [],
) =>
  http(
    {
      operationId: 'oauth_authorize',
      summary:
        'OAuth 2.0 authorization endpoint (RFC 6749 4.1.1): response_type=code with PKCE S256; a sign-in and consent page',
      tags: ['oauth'],
      permission: 'public',
      responses: {
        200: { description: 'The sign-in page', contentType: 'text/html', schema: v.string() },
        303: { description: 'Back to the redirect URI with an RFC 6749 4.1.2.1 error and the state' },
        400: {
          description: 'A page: unknown or inactive client, or a redirect URI it did not register',
          contentType: 'text/html',
          schema: v.string(),
        },
      },
    },
    async (request) => {
      const checked = await checkAuthorizationRequest(deps(), new URLSearchParams(request.rawQuery ?? ''));
      if ('kind' in checked) {
        if (checked.kind === 'page') return errorPage(400, checked.message);
        return redirectTo(
          responseUri(checked, oauthIssuer(), { error: checked.error, error_description: checked.description }),
        );
      }
      const csrf = deps().random.random();
      const sealed = await sealRequest(notes(), checked.request, deps().random.hash(csrf));
      return loginPage({
        clientName: checked.client.name,
        request: sealed,
        cookies: [csrfCookie(request, csrf)],
        providers: await providers(),
      });
    },
  );

export const handler = makeHandler(oauthTokenDeps, oauthNotes, signInProviders);
