// handler -> checkPassword / checkTwoFactor (domain/identity), issueCode (domain/oauth/authorization.ts)
// POST /oauth/consent: the steps of the authorization page, one form each: `login` (email, password), `two_factor`
// (the code), `consent` (allow or deny). Every step carries the sealed request and is checked against the CSRF
// cookie; the consent step also carries the sealed sign-in. Allow answers 303 to the redirect URI with a code; deny
// with access_denied; `state` and `iss` go along either way.
import * as v from 'valibot';
import { AuthRateLimitError, InvalidCredentialsError, InvalidTokenError } from '../../../domain/identity/errors.js';
import { rolePowersGranted } from '../../../domain/identity/delegation.js';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { checkPassword } from '../../../domain/identity/login.js';
import { checkTwoFactor } from '../../../domain/identity/two-factor.js';
import type { User } from '../../../domain/identity/types.js';
import {
  grantableScope,
  issueCode,
  type AuthorizationDeps,
  type AuthorizationRequest,
} from '../../../domain/oauth/authorization.js';
import { OAuthError } from '../../../domain/oauth/tokens.js';
import type { SealedNotes } from '../../../domain/oauth/ports.js';
import { http, type HttpResult } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { oauthIssuer, oauthNotes, oauthTokenDeps } from '../../shared/oauth-wiring.js';
import { csrfCookie, openLogin, openRequest, responseUri, sealLogin, StalePage } from './authorize-flow.js';
import { consentPage, errorPage, loginPage, redirectTo, twoFactorPage, type PageContext } from './pages.js';
import { formOf } from './oauth-http.js';

export interface Deps {
  readonly oauth: AuthorizationDeps;
  readonly identity: IdentityDeps;
  readonly notes: SealedNotes;
}

const waitMessage = (error: AuthRateLimitError) => `Too many attempts: try again in ${error.retryAfterSeconds} s.`;

/**
 * The consent form for a signed-in user: what they can grant (asked for and held now) and what they cannot.
 * `authTime`: when they signed in (now, or at the identity provider).
 */
export const consent = async (
  deps: Deps,
  ctx: PageContext,
  request: AuthorizationRequest,
  user: User,
  authTime = deps.oauth.clock.now().getTime(),
) => {
  const held = await deps.identity.roles.permissionsOf(user.roles);
  const granted = grantableScope(request, held);
  const login = await sealLogin(deps.notes, deps.oauth.random, ctx.request, user.id, authTime);
  return consentPage(ctx, login, {
    email: user.email,
    granted,
    withheld: request.scope.filter((s) => !granted.includes(s)),
    redirectOrigin: new URL(request.redirectUri).origin,
    rolePowers: rolePowersGranted(user.roles, granted),
  });
};

const step = async (
  deps: Deps,
  form: ReadonlyMap<string, string>,
  ctx: PageContext,
  request: AuthorizationRequest,
  ip: string,
  clearCookie: string,
): Promise<HttpResult> => {
  switch (form.get('step')) {
    case 'login': {
      const email = form.get('email') ?? '';
      const password = form.get('password') ?? '';
      if (email === '' || password === '') return loginPage(ctx, 400, 'Enter your email and password.', email);
      try {
        const outcome = await checkPassword(deps.identity, { email, password, ip });
        if (outcome.kind === 'two_factor') return twoFactorPage(ctx, outcome.body.pending_token);
        return await consent(deps, ctx, request, outcome.user);
      } catch (error) {
        if (error instanceof InvalidCredentialsError) return loginPage(ctx, 401, error.message, email);
        if (error instanceof AuthRateLimitError) return loginPage(ctx, 429, waitMessage(error), email);
        throw error;
      }
    }
    case 'two_factor': {
      const pendingToken = form.get('pending_token') ?? '';
      try {
        const user = await checkTwoFactor(deps.identity, { code: form.get('code') ?? '', pendingToken, ip });
        return await consent(deps, ctx, request, user);
      } catch (error) {
        if (error instanceof InvalidTokenError) return loginPage(ctx, 401, 'The sign-in expired: sign in again.');
        if (error instanceof InvalidCredentialsError) return twoFactorPage(ctx, pendingToken, 401, error.message);
        if (error instanceof AuthRateLimitError) return twoFactorPage(ctx, pendingToken, 429, waitMessage(error));
        throw error;
      }
    }
    case 'consent': {
      const login = await openLogin(deps.notes, deps.oauth.random, ctx.request, form.get('login'));
      const user = await deps.identity.users.get(login.userId);
      if (user === undefined || user.status !== 'active' || login.authTime <= user.tokensValidAfter)
        throw new StalePage('The account is not active, or signed out meanwhile.');
      const deny = (description: string) =>
        redirectTo(responseUri(request, oauthIssuer(), { error: 'access_denied', error_description: description }), [
          clearCookie,
        ]);
      if (form.get('decision') !== 'allow') return deny('The user denied the request.');
      const granted = grantableScope(request, await deps.identity.roles.permissionsOf(user.roles));
      if (granted.length === 0) return deny('The user holds none of the permissions asked for.');
      const code = await issueCode(deps.oauth, request, user, granted, login.authTime);
      return redirectTo(responseUri(request, oauthIssuer(), { code }), [clearCookie]);
    }
    default:
      return errorPage(400, 'The form is not one of this page’s steps.');
  }
};

export const makeHandler = (deps: () => Deps) =>
  http(
    {
      operationId: 'oauth_consent',
      summary:
        'The authorization page’s forms (sign in, 2FA code, allow or deny); form-encoded, CSRF-protected; allow or deny redirects to the client',
      tags: ['oauth'],
      permission: 'public',
      limiterDown: 'refuse',
      responses: {
        200: { description: 'The next page (2FA code, consent)', contentType: 'text/html', schema: v.string() },
        303: { description: 'Back to the redirect URI with `code` or `error=access_denied`, `state` and `iss`' },
        400: { description: 'A page: an expired or forged form', contentType: 'text/html', schema: v.string() },
        401: { description: 'The page again: wrong password or code', contentType: 'text/html', schema: v.string() },
        429: { description: 'The page again: too many failed attempts', contentType: 'text/html', schema: v.string() },
      },
    },
    async (request) => {
      const d = deps();
      try {
        let form: Map<string, string>;
        try {
          form = formOf(request.headers, request.rawBody);
        } catch (error) {
          if (error instanceof OAuthError) return errorPage(400, 'The form could not be read.');
          throw error;
        }
        const sealed = form.get('request');
        const authRequest = await openRequest(d.notes, d.oauth.random, request, sealed, oauthIssuer());
        const client = await d.oauth.clients.findByClientId(authRequest.clientId);
        if (client === undefined || !client.isActive)
          return errorPage(400, 'The application is no longer allowed to ask for access.');
        const ctx: PageContext = { clientName: client.name, request: sealed! };
        return await step(d, form, ctx, authRequest, request.sourceIp, csrfCookie(request, '', 0));
      } catch (error) {
        if (error instanceof StalePage) return errorPage(400, error.message);
        throw error;
      }
    },
  );

export const handler = makeHandler(() => ({ oauth: oauthTokenDeps(), identity: identityDeps(), notes: oauthNotes() }));
