// What GET /oauth/authorize and POST /oauth/consent share: the authorization request sealed into the page (so no
// record is written before the user approves), the CSRF cookie whose hash the sealed request carries, the sealed
// proof of sign-in bound to that request, and the authorization response's parameters (RFC 9207 `iss`).
import type { AuthorizationRequest } from '../../../domain/oauth/authorization.js';
import { withParams } from '../../../domain/oauth/authorization.js';
import type { SealedNotes } from '../../../domain/oauth/ports.js';
import type { TokenGenerator } from '../../../domain/identity/ports.js';
import type { HttpRequest } from '../../shared/http.js';
import { isPlainLocalhost } from '../auth/cookies.js';

export const CSRF_COOKIE = 'deployer_oauth_csrf';
/** How long the page may stay open between its steps. */
export const PAGE_TTL_SECONDS = 600;
const REQUEST_NOTE = 'oauth_request';
const LOGIN_NOTE = 'oauth_login';
const SSO_NOTE = 'oauth_sso';
/** The path an SSO sign-in started from the page returns to (with `request` and, from the callback, `sso`). */
export const SSO_RETURN_PATH = '/oauth/authorize/sso';

type AnyRequest = HttpRequest<unknown, unknown, unknown, unknown>;

/**
 * HttpOnly, scoped to /oauth, Secure but on plain localhost. SameSite=Lax, not Strict: the way back from an identity
 * provider (/oauth/authorize/sso) is a navigation that started on another site, where a Strict cookie is not sent;
 * Lax still keeps it off cross-site form posts, and the cookie only proves anything together with the hash sealed
 * into this browser's own page.
 */
export const csrfCookie = (request: AnyRequest, value: string, maxAge = PAGE_TTL_SECONDS): string =>
  `${CSRF_COOKIE}=${value}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${isPlainLocalhost(request.headers) ? '' : '; Secure'}`;

export const sealRequest = (notes: SealedNotes, request: AuthorizationRequest, csrfHash: string): Promise<string> =>
  notes.seal(
    REQUEST_NOTE,
    {
      cid: request.clientId,
      ru: request.redirectUri,
      sc: [...request.scope],
      st: request.state,
      cc: request.codeChallenge,
      csrf: csrfHash,
    },
    PAGE_TTL_SECONDS,
  );

/** Why a posted page cannot go on (shown on an error page, never redirected). */
export class StalePage extends Error {
  override readonly name = 'StalePage';
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : [];

/**
 * The authorization request a posted form carries, if its note is genuine and unexpired, the CSRF cookie matches it,
 * and the form comes from this origin.
 */
export const openRequest = async (
  notes: SealedNotes,
  random: TokenGenerator,
  request: AnyRequest,
  sealed: string | undefined,
  issuer: string,
): Promise<AuthorizationRequest> => {
  const stale = new StalePage('This sign-in page has expired or was opened in another window.');
  const origin = request.headers['origin'];
  const own = `${request.headers['x-forwarded-proto'] ?? 'https'}://${request.headers['x-forwarded-host'] ?? request.headers['host'] ?? ''}`;
  if (origin !== undefined && origin !== new URL(issuer).origin && origin !== own)
    throw new StalePage('The form was posted from another site.');
  if (sealed === undefined) throw stale;
  let data: Readonly<Record<string, unknown>>;
  try {
    data = await notes.unseal(REQUEST_NOTE, sealed);
  } catch {
    throw stale;
  }
  const cookie = request.cookies[CSRF_COOKIE];
  if (cookie === undefined || random.hash(cookie) !== data['csrf']) throw stale;
  if (typeof data['cid'] !== 'string' || typeof data['ru'] !== 'string') throw stale;
  return {
    clientId: data['cid'],
    redirectUri: data['ru'],
    scope: strings(data['sc']),
    state: typeof data['st'] === 'string' ? data['st'] : null,
    codeChallenge: typeof data['cc'] === 'string' ? data['cc'] : null,
  };
};

/** The proof that `userId` signed in at `authTime` on the page of exactly this sealed request. */
export const sealLogin = (
  notes: SealedNotes,
  random: TokenGenerator,
  sealedRequest: string,
  userId: string,
  authTime: number,
): Promise<string> =>
  notes.seal(LOGIN_NOTE, { uid: userId, at: authTime, req: random.hash(sealedRequest) }, PAGE_TTL_SECONDS);

export const openLogin = async (
  notes: SealedNotes,
  random: TokenGenerator,
  sealedRequest: string,
  sealed: string | undefined,
): Promise<{ userId: string; authTime: number }> => {
  const stale = new StalePage('The sign-in has expired: start again from the application.');
  if (sealed === undefined) throw stale;
  let data: Readonly<Record<string, unknown>>;
  try {
    data = await notes.unseal(LOGIN_NOTE, sealed);
  } catch {
    throw stale;
  }
  if (data['req'] !== random.hash(sealedRequest) || typeof data['uid'] !== 'string' || typeof data['at'] !== 'number')
    throw stale;
  return { userId: data['uid'], authTime: data['at'] };
};

/** The authorization response (RFC 6749 4.1.2 / 4.1.2.1) with `state` and `iss` (RFC 9207). */
export const responseUri = (
  request: Pick<AuthorizationRequest, 'redirectUri' | 'state'>,
  issuer: string,
  params: Readonly<Record<string, string>>,
): string => withParams(request.redirectUri, { ...params, state: request.state, iss: issuer });

/**
 * The proof, from the SSO callback, that `userId` signed in with an identity provider for exactly this sealed request;
 * `twoFactor`: the user must still give a code (a provider not trusted for 2FA).
 */
export const sealSsoLogin = (
  notes: SealedNotes,
  random: TokenGenerator,
  sealedRequest: string,
  userId: string,
  twoFactor: boolean,
  authTime: number,
): Promise<string> =>
  notes.seal(
    SSO_NOTE,
    { uid: userId, at: authTime, mfa: twoFactor, req: random.hash(sealedRequest) },
    PAGE_TTL_SECONDS,
  );

export const openSsoLogin = async (
  notes: SealedNotes,
  random: TokenGenerator,
  sealedRequest: string,
  sealed: string | undefined,
): Promise<{ userId: string; authTime: number; twoFactor: boolean }> => {
  const stale = new StalePage('The sign-in has expired: start again from the application.');
  if (sealed === undefined) throw stale;
  let data: Readonly<Record<string, unknown>>;
  try {
    data = await notes.unseal(SSO_NOTE, sealed);
  } catch {
    throw stale;
  }
  if (data['req'] !== random.hash(sealedRequest) || typeof data['uid'] !== 'string' || typeof data['at'] !== 'number')
    throw stale;
  return { userId: data['uid'], authTime: data['at'], twoFactor: data['mfa'] === true };
};

/** The sealed request of an SSO return path (`/oauth/authorize/sso?request=...`), or undefined for any other path. */
export const requestOfSsoReturn = (returnTo: string): string | undefined => {
  const url = new URL(returnTo, 'http://return-to.invalid');
  return url.pathname === SSO_RETURN_PATH ? (url.searchParams.get('request') ?? undefined) : undefined;
};
