// handler -> completeSsoSignIn (domain/sso/sign-in.ts) -> ssoSession (a session as a password login makes one)
// The provider sends the browser here. Success: the refresh-token cookie and 303 to the sign-in's return_to (the
// page then calls POST /api/v1/auth/refresh for an access token); when the user must still give a two-factor code,
// 303 to return_to with `#requires_2fa=true&pending_token=...` in the fragment (never sent to a server) for POST
// /api/v1/auth/2fa/verify. Failure: the error envelope. The binding cookie is cleared either way.
import * as v from 'valibot';
import { DomainError } from '../../../domain/errors.js';
import type { IdentityDeps } from '../../../domain/identity/deps.js';
import { completeSsoSignIn, ssoSession, type SsoDeps } from '../../../domain/sso/sign-in.js';
import { renderError } from '../../shared/errors.js';
import { http } from '../../shared/http.js';
import { identityDeps } from '../../shared/identity-wiring.js';
import { ErrorEnvelopeSchema } from '../../shared/schemas.js';
import { ssoDeps } from '../../shared/sso-wiring.js';
import { randomTokens } from '../../../infra/crypto/tokens.js';
import { oauthNotes } from '../../shared/oauth-wiring.js';
import { requestOfSsoReturn, sealSsoLogin } from '../oauth/authorize-flow.js';
import { clearedSsoCookie, refreshCookie, SSO_COOKIE } from './cookies.js';

const Text = v.optional(v.pipe(v.string(), v.maxLength(4000)));
const Params = v.object({ provider: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });
const Query = v.object({ state: Text, code: Text, error: Text });

export const makeHandler = (deps: () => SsoDeps, identity: () => IdentityDeps) =>
  http(
    {
      operationId: 'sso_callback',
      summary: 'Where the identity provider sends the browser back: completes the sign-in like a password login',
      tags: ['auth'],
      permission: 'public',
      limiterDown: 'refuse',
      params: Params,
      query: Query,
      responses: {
        303: { description: 'Signed in: the refresh-token cookie is set; to return_to' },
        400: { description: 'VALIDATION_ERROR: no state or no code', schema: ErrorEnvelopeSchema },
        401: {
          description:
            'INVALID_TOKEN (unknown, used or expired state; another browser; an ID token that does not verify) or INVALID_CREDENTIALS (the provider refused; an inactive account)',
          schema: ErrorEnvelopeSchema,
        },
        403: {
          description:
            'FORBIDDEN (details.reason): the provider is disabled; no account is linked and none may be created (not_provisioned, unverified_email); the account is not of the tenant provider’s tenant (other_tenant)',
          schema: ErrorEnvelopeSchema,
        },
        404: { description: 'NOT_FOUND', schema: ErrorEnvelopeSchema },
        409: { description: 'CONFLICT: the account changed meanwhile; sign in again', schema: ErrorEnvelopeSchema },
      },
    },
    async (request) => {
      const cleared = clearedSsoCookie(request);
      try {
        const signedIn = await completeSsoSignIn(deps(), {
          provider: request.params.provider,
          state: request.query.state,
          code: request.query.code,
          error: request.query.error,
          binding: request.cookies[SSO_COOKIE],
        });
        const headers = { 'cache-control': 'no-store' };
        // Started on the OAuth authorization page: back to it with a sealed proof, no API session.
        const sealedRequest = requestOfSsoReturn(signedIn.returnTo);
        if (sealedRequest !== undefined) {
          const proof = await sealSsoLogin(
            oauthNotes(),
            randomTokens,
            sealedRequest,
            signedIn.user.id,
            signedIn.user.twoFactor.enabled && !signedIn.provider.trustedFor2fa,
            Date.now(),
          );
          return {
            statusCode: 303,
            body: undefined,
            headers: { ...headers, location: `${signedIn.returnTo}&${new URLSearchParams({ sso: proof })}` },
            cookies: [cleared],
          };
        }
        const outcome = await ssoSession(identity(), signedIn);
        if (outcome.kind === 'two_factor') {
          const path = signedIn.returnTo.replace(/#.*$/, '');
          const fragment = `requires_2fa=true&pending_token=${encodeURIComponent(outcome.pendingToken)}`;
          return {
            statusCode: 303,
            body: undefined,
            headers: { ...headers, location: `${path}#${fragment}` },
            cookies: [cleared],
          };
        }
        return {
          statusCode: 303,
          body: undefined,
          headers: { ...headers, location: signedIn.returnTo },
          cookies: [refreshCookie(request, outcome.refreshToken, outcome.refreshExpiresAt), cleared],
        };
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        // Answer the error and drop the binding cookie in the same response.
        const rendered = renderError(error, request.requestId);
        return {
          statusCode: rendered.statusCode,
          body: rendered.body,
          ...(rendered.headers === undefined ? {} : { headers: rendered.headers }),
          cookies: [cleared],
        };
      }
    },
  );

export const handler = makeHandler(ssoDeps, identityDeps);
