// handler -> openRequest, openSsoLogin (authorize-flow.ts) -> the 2FA step or the consent page (consent-post.ts)
// GET /oauth/authorize/sso?request=...&sso=...: where the SSO callback sends the browser when the sign-in started on
// the authorization page. The sealed proof names the user and whether a two-factor code is still owed (a provider
// not trusted for 2FA); the page goes on exactly as after a password.
import * as v from 'valibot';
import { identityDeps } from '../../shared/identity-wiring.js';
import { http } from '../../shared/http.js';
import { oauthIssuer, oauthNotes, oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { openRequest, openSsoLogin, StalePage } from './authorize-flow.js';
import { consent, type Deps } from './consent-post.js';
import { errorPage, twoFactorPage, type PageContext } from './pages.js';

export const makeHandler = (deps: () => Deps) =>
  http(
    {
      operationId: 'oauth_sso_return',
      summary: 'The authorization page after signing in with an identity provider: the 2FA code, or consent',
      tags: ['oauth'],
      permission: 'public',
      responses: {
        200: { description: 'The 2FA code page, or the consent page', contentType: 'text/html', schema: v.string() },
        400: { description: 'A page: an expired or forged way back', contentType: 'text/html', schema: v.string() },
      },
    },
    async (request) => {
      const d = deps();
      try {
        const query = new URLSearchParams(request.rawQuery ?? '');
        const sealed = query.get('request') ?? undefined;
        const authRequest = await openRequest(d.notes, d.oauth.random, request, sealed, oauthIssuer());
        const signedIn = await openSsoLogin(d.notes, d.oauth.random, sealed!, query.get('sso') ?? undefined);
        const client = await d.oauth.clients.findByClientId(authRequest.clientId);
        if (client === undefined || !client.isActive)
          return errorPage(400, 'The application is no longer allowed to ask for access.');
        const user = await d.identity.users.get(signedIn.userId);
        if (user === undefined || user.status !== 'active')
          return errorPage(400, 'The account is not active: ask an administrator.');
        const ctx: PageContext = { clientName: client.name, request: sealed! };
        if (signedIn.twoFactor && user.twoFactor.enabled) {
          const pending = await d.identity.tokens.issue(
            {
              type: 'two_factor_pending',
              userId: user.id,
              tenantId: user.tenantId,
              issuedAt: d.oauth.clock.now().getTime(),
            },
            d.identity.settings.twoFactorPendingTtlSeconds,
          );
          return twoFactorPage(ctx, pending);
        }
        return await consent(d, ctx, authRequest, user, signedIn.authTime);
      } catch (error) {
        if (error instanceof StalePage) return errorPage(400, error.message);
        throw error;
      }
    },
  );

export const handler = makeHandler(() => ({ oauth: oauthTokenDeps(), identity: identityDeps(), notes: oauthNotes() }));
