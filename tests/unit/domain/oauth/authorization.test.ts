// The authorization request's checks (RFC 6749 4.1.1 / 4.1.2.1, RFC 7636, RFC 9700): what is shown on a page, what
// is redirected with which error, and the PKCE helpers.
import { describe, expect, it } from 'vitest';
import { checkAuthorizationRequest, s256, withParams } from '../../../../domain/oauth/authorization.js';
import type { OAuthClient } from '../../../../domain/oauth/types.js';

const REDIRECT = 'https://app.example/callback';
const CHALLENGE = s256('a'.repeat(43));

const client = (overrides: Partial<OAuthClient> = {}): OAuthClient => ({
  id: 'c1',
  shortId: '1',
  clientId: 'dplc_app',
  name: 'App',
  description: null,
  redirectUris: [REDIRECT],
  grantTypes: ['authorization_code', 'refresh_token'],
  scopes: ['deployments:read', 'targets:read'],
  isConfidential: false,
  secretHash: null,
  isActive: true,
  tenantId: null,
  createdBy: 'u1',
  createdAt: '2026-11-25T00:00:00Z',
  updatedAt: '2026-11-25T00:00:00Z',
  revision: 1,
  ...overrides,
});

const check = (query: Record<string, string> | string, c: OAuthClient = client()) =>
  checkAuthorizationRequest(
    { clients: { findByClientId: async (id: string) => (id === c.clientId ? c : undefined) } },
    new URLSearchParams(query),
  );

const good = {
  response_type: 'code',
  client_id: 'dplc_app',
  redirect_uri: REDIRECT,
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  state: 'st',
};

describe('checkAuthorizationRequest', () => {
  it('accepts a PKCE request and defaults the scope to the client’s', async () => {
    const checked = await check(good);
    expect(checked).toMatchObject({
      request: {
        clientId: 'dplc_app',
        redirectUri: REDIRECT,
        scope: ['deployments:read', 'targets:read'],
        state: 'st',
        codeChallenge: CHALLENGE,
      },
    });
  });

  it('shows client and redirect URI problems on a page, never redirecting them', async () => {
    expect(await check({ ...good, client_id: 'dplc_other' })).toMatchObject({ kind: 'page' });
    expect(await check(good, client({ isActive: false }))).toMatchObject({ kind: 'page' });
    expect(await check({ ...good, redirect_uri: `${REDIRECT}/x` })).toMatchObject({ kind: 'page' });
    expect(await check({ ...good, redirect_uri: REDIRECT.toUpperCase() })).toMatchObject({ kind: 'page' });
    expect(await check(`${new URLSearchParams(good)}&redirect_uri=${encodeURIComponent(REDIRECT)}`)).toMatchObject({
      kind: 'page',
    });
    const { redirect_uri: _omitted, ...noRedirect } = good;
    expect(await check(noRedirect)).toMatchObject({ request: { redirectUri: REDIRECT } }); // the only one registered
    expect(await check(noRedirect, client({ redirectUris: [REDIRECT, 'https://app.example/other'] }))).toMatchObject({
      kind: 'page',
    });
  });

  it('redirects every other problem with its RFC error and the state', async () => {
    const cases: [Record<string, string>, string, OAuthClient?][] = [
      [{ ...good, response_type: 'token' }, 'unsupported_response_type'],
      [good, 'unauthorized_client', client({ grantTypes: ['client_credentials'], isConfidential: true })],
      [{ ...good, code_challenge: '' }, 'invalid_request'],
      [{ ...good, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ ...good, code_challenge: 'short' }, 'invalid_request'],
      [{ ...good, scope: 'deployments:read users:create' }, 'invalid_scope'],
    ];
    for (const [query, error, c] of cases) {
      expect(await check(query, c), error).toMatchObject({
        kind: 'redirect',
        error,
        state: 'st',
        redirectUri: REDIRECT,
      });
    }
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = good;
    expect(await check(noPkce)).toMatchObject({ kind: 'redirect', error: 'invalid_request' });
    // A confidential client may go without PKCE (it authenticates at the token endpoint).
    expect(await check(noPkce, client({ isConfidential: true }))).toMatchObject({ request: { codeChallenge: null } });
    expect(await check(`${new URLSearchParams(good)}&scope=a&scope=b`)).toMatchObject({ error: 'invalid_request' });
  });
});

describe('the PKCE and response helpers', () => {
  it('computes the RFC 7636 appendix B example challenge', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('adds parameters to a redirect URI that has a query of its own', () => {
    expect(withParams('https://app.example/cb?tenant=a', { code: 'x y', state: null, iss: 'https://d.example' })).toBe(
      'https://app.example/cb?tenant=a&code=x+y&iss=https%3A%2F%2Fd.example',
    );
  });
});
