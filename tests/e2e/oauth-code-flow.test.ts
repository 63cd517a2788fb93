// The authorization code grant over HTTP: the sign-in and consent page driven as a browser without JavaScript
// would (tests/support/oauth-page.ts), the code exchanged and refreshed by a real client library (oauth4webapi).
// PKCE, single-use codes (a reuse revokes what the code produced), refresh rotation and reuse detection, the user's
// own permissions as a ceiling, 2FA on the page, CSRF, deny, wrong redirect URIs, revocation and introspection.
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { pageSession, type PageAnswer } from '../support/oauth-page.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const REDIRECT = 'http://127.0.0.1:8765/callback';
const e2e = useStack('oauthc');
let as: oauth.AuthorizationServer;

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const options = () => ({
  [oauth.allowInsecureRequests]: true,
  [oauth.customFetch]: (url: string, init: RequestInit) =>
    fetch(url.replace(/^http:\/\/localhost:\d+/, e2e.stack.baseUrl), init),
});
const issuer = () => new URL(`http://localhost:${e2e.stack.port}`);

interface Registered {
  client_id: string;
  client_secret: string | null;
}

const newClient = async (body: Record<string, unknown> = {}): Promise<Registered> => {
  const created = await call('POST', '/admin/oauth-clients', e2e.admin, {
    name: 'Release dashboard',
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: [REDIRECT],
    scopes: ['deployments:read', 'targets:read'],
    is_confidential: false,
    ...body,
  });
  expect(created.status).toBe(201);
  return created.json as Registered;
};

const authOf = (client: Registered) =>
  client.client_secret === null ? oauth.None() : oauth.ClientSecretBasic(client.client_secret);

/** A fresh authorization request with PKCE: its query, verifier and state. */
const request = async (client: Registered, extra: Record<string, string> = {}) => {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const query = {
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  };
  return { query, verifier, state };
};

/** Signs in on the page and answers the consent page (or whatever the sign-in answered). */
const signIn = async (
  page: ReturnType<typeof pageSession>,
  query: Record<string, string>,
  credentials: { email: string; password: string },
): Promise<PageAnswer> => {
  const opened = await page.open(query);
  expect(opened.status).toBe(200);
  return page.post({ ...opened.hidden, email: credentials.email, password: credentials.password });
};

/** The whole page flow, allowed: the redirect's URL. */
const authorize = async (
  client: Registered,
  credentials: { email: string; password: string },
  extra: Record<string, string> = {},
) => {
  const r = await request(client, extra);
  const page = pageSession(() => e2e.stack.baseUrl);
  const consent = await signIn(page, r.query, credentials);
  expect(consent.status).toBe(200);
  const allowed = await page.post({ ...consent.hidden, decision: 'allow' });
  expect(allowed.status).toBe(303);
  return { ...r, url: new URL(allowed.location!) };
};

const exchange = async (client: Registered, url: URL, verifier: string, state: string) => {
  const c: oauth.Client = { client_id: client.client_id };
  const params = oauth.validateAuthResponse(as, c, url, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    c,
    authOf(client),
    params,
    REDIRECT,
    verifier,
    options(),
  );
  return oauth.processAuthorizationCodeResponse(as, c, response);
};

/** A raw form POST to the token endpoint (for the error answers a library would hide). */
const tokenForm = async (fields: Record<string, string>, headers: Record<string, string> = {}) => {
  const response = await fetch(`${e2e.stack.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

const USER = { email: 'release@example.com', password: 'release-password' };

beforeAll(async () => {
  await createUser(USER.email, USER.password, ['user']);
  as = await oauth.processDiscoveryResponse(
    issuer(),
    await oauth.discoveryRequest(issuer(), { ...options(), algorithm: 'oauth2' }),
  );
});

describe('the authorization code grant', () => {
  it('is announced by discovery (RFC 8414)', () => {
    expect(as.authorization_endpoint).toBe(`${issuer().origin}/oauth/authorize`);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.grant_types_supported).toEqual(['authorization_code', 'client_credentials', 'refresh_token']);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('signs a user in, asks for consent, and issues user tokens within the scope and the user’s permissions', async () => {
    const client = await newClient();
    const r = await request(client, { scope: 'deployments:read targets:read' });
    const page = pageSession(() => e2e.stack.baseUrl);
    const opened = await page.open(r.query);
    expect(opened.status).toBe(200);
    expect(opened.html).toContain('Release dashboard');
    expect(opened.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(opened.headers.get('cache-control')).toBe('no-store');
    expect(page.cookie).toEqual(expect.any(String));

    const wrong = await page.post({ ...opened.hidden, email: USER.email, password: 'nope' });
    expect([wrong.status, wrong.html.includes('Invalid email or password')]).toEqual([401, true]);
    const consent = await page.post({ ...opened.hidden, email: USER.email, password: USER.password });
    expect(consent.status).toBe(200);
    expect(consent.html).toContain('Allow access?');
    expect(consent.html).toContain('deployments:read');
    // Chrome applies form-action to the redirect after the POST: the client's origin is allowed there.
    expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:8765");

    const allowed = await page.post({ ...consent.hidden, decision: 'allow' });
    expect(allowed.status).toBe(303);
    const url = new URL(allowed.location!);
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get('state')).toBe(r.state);
    expect(url.searchParams.get('iss')).toBe(issuer().origin);

    const tokens = await exchange(client, url, r.verifier, r.state);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('deployments:read targets:read');
    expect(tokens.refresh_token).toMatch(/^dplr_/);
    const me = await call('GET', '/auth/me', tokens.access_token);
    expect([me.status, me.json.email]).toEqual([200, USER.email]);
    expect((await call('GET', '/deployments', tokens.access_token)).status).toBe(200);
    // Not in the grant, although the user holds it.
    expect((await call('GET', '/actions', tokens.access_token)).status).toBe(403);
  });

  it('rotates refresh tokens, and a reused one revokes the whole grant', async () => {
    const client = await newClient();
    const { url, verifier, state } = await authorize(client, USER);
    const first = await exchange(client, url, verifier, state);
    const c: oauth.Client = { client_id: client.client_id };
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      c,
      await oauth.refreshTokenGrantRequest(as, c, oauth.None(), first.refresh_token!, options()),
    );
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
    expect((await call('GET', '/deployments', refreshed.access_token)).status).toBe(200);

    // The retired token again: refused, and everything of the grant with it.
    const reused = await tokenForm({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token!,
      client_id: client.client_id,
    });
    expect([reused.status, reused.json.error]).toEqual([400, 'invalid_grant']);
    const successor = await tokenForm({
      grant_type: 'refresh_token',
      refresh_token: refreshed.refresh_token!,
      client_id: client.client_id,
    });
    expect([successor.status, successor.json.error]).toEqual([400, 'invalid_grant']);
    expect((await call('GET', '/deployments', refreshed.access_token)).status).toBe(401);
    expect((await call('GET', '/deployments', first.access_token)).status).toBe(401);
  });

  it('takes a code once; a second exchange revokes the tokens of the first', async () => {
    const client = await newClient();
    const { url, verifier, state } = await authorize(client, USER);
    const tokens = await exchange(client, url, verifier, state);
    const again = await tokenForm({
      grant_type: 'authorization_code',
      code: url.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: client.client_id,
    });
    expect([again.status, again.json.error]).toEqual([400, 'invalid_grant']);
    expect((await call('GET', '/deployments', tokens.access_token)).status).toBe(401);
  });

  it('binds a code to its PKCE verifier, client and redirect URI without spending it on a wrong try', async () => {
    const client = await newClient();
    const other = await newClient();
    const { url, verifier } = await authorize(client, USER);
    const code = url.searchParams.get('code')!;
    const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.client_id };
    const wrongVerifier = await tokenForm({ ...base, code_verifier: oauth.generateRandomCodeVerifier() });
    expect([wrongVerifier.status, wrongVerifier.json.error]).toEqual([400, 'invalid_grant']);
    expect((await tokenForm(base)).json.error).toBe('invalid_grant'); // no verifier at all
    expect(
      (await tokenForm({ ...base, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:8765/other' })).json.error,
    ).toBe('invalid_grant');
    expect((await tokenForm({ ...base, code_verifier: verifier, client_id: other.client_id })).json.error).toBe(
      'invalid_grant',
    );
    const right = await tokenForm({ ...base, code_verifier: verifier });
    expect(right.status).toBe(200);
    expect(right.json.access_token).toEqual(expect.any(String));
  });

  it('shows an unknown client or an unregistered redirect URI on a page, and redirects every other problem', async () => {
    const client = await newClient();
    const page = pageSession(() => e2e.stack.baseUrl);
    const unknown = await page.open({ response_type: 'code', client_id: 'dplc_nobody', redirect_uri: REDIRECT });
    expect([unknown.status, unknown.location]).toEqual([400, null]);
    expect(unknown.html).toContain('not known');
    const evil = await page.open({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: 'https://evil.example/callback',
    });
    expect([evil.status, evil.location]).toEqual([400, null]);

    const noPkce = await page.open({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      state: 's1',
    });
    expect(noPkce.status).toBe(303);
    const noPkceUrl = new URL(noPkce.location!);
    expect([noPkceUrl.searchParams.get('error'), noPkceUrl.searchParams.get('state')]).toEqual([
      'invalid_request',
      's1',
    ]);

    const { query } = await request(client, { scope: 'deployments:read users:create' });
    const beyond = new URL((await page.open(query)).location!);
    expect(beyond.searchParams.get('error')).toBe('invalid_scope');
    const token = new URL((await page.open({ ...query, scope: 'deployments:read', response_type: 'token' })).location!);
    expect(token.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('sends access_denied back with the state when the user denies', async () => {
    const client = await newClient();
    const r = await request(client);
    const page = pageSession(() => e2e.stack.baseUrl);
    const consent = await signIn(page, r.query, USER);
    const denied = await page.post({ ...consent.hidden, decision: 'deny' });
    expect(denied.status).toBe(303);
    const url = new URL(denied.location!);
    expect([url.searchParams.get('error'), url.searchParams.get('state'), url.searchParams.get('code')]).toEqual([
      'access_denied',
      r.state,
      null,
    ]);
  });

  it('never grants what the user does not hold, whatever the client may ask for', async () => {
    // An admin's client may ask for users:create; a plain user signing in cannot hand it over.
    const client = await newClient({ scopes: ['deployments:read', 'users:create', 'roles:update'] });
    const r = await request(client, { scope: 'deployments:read users:create roles:update' });
    const page = pageSession(() => e2e.stack.baseUrl);
    const consent = await signIn(page, r.query, USER);
    expect(consent.html).toContain('not yours to give');
    const allowed = await page.post({ ...consent.hidden, decision: 'allow' });
    const tokens = await exchange(client, new URL(allowed.location!), r.verifier, r.state);
    expect(tokens.scope).toBe('deployments:read');
    const created = await call('POST', '/admin/users', tokens.access_token, {
      email: 'sneaky@example.com',
      username: 'sneaky',
      password: 'sneaky-password-1',
      roles: ['admin'],
    });
    expect(created.status).toBe(403);
  });

  it('refuses forms without the page’s CSRF cookie, from another origin, or with a forged step', async () => {
    const client = await newClient();
    const r = await request(client);
    const page = pageSession(() => e2e.stack.baseUrl);
    const opened = await page.open(r.query);
    const cookie = page.cookie;

    page.cookie = undefined; // a cross-site form post carries no SameSite=Strict cookie
    const noCookie = await page.post({ ...opened.hidden, email: USER.email, password: USER.password });
    expect([noCookie.status, noCookie.html.includes('expired')]).toEqual([400, true]);

    page.cookie = pageSession(() => e2e.stack.baseUrl).cookie ?? 'another-browser';
    expect((await page.post({ ...opened.hidden, email: USER.email, password: USER.password })).status).toBe(400);

    page.cookie = cookie;
    const foreign = await page.post(
      { ...opened.hidden, email: USER.email, password: USER.password },
      { origin: 'https://evil.example' },
    );
    expect(foreign.status).toBe(400);

    // Consent without having signed in: no sealed login, no code.
    const skipped = await page.post({ request: opened.hidden['request']!, step: 'consent', decision: 'allow' });
    expect([skipped.status, skipped.location]).toEqual([400, null]);
    // A sealed request of another page with this page's cookie.
    const other = await pageSession(() => e2e.stack.baseUrl).open(r.query);
    expect((await page.post({ ...other.hidden, email: USER.email, password: USER.password })).status).toBe(400);
  });

  it('asks a 2FA user for the code on the page', async () => {
    const { generate } = await import('otplib');
    const credentials = { email: 'oauth-totp@example.com', password: 'totp-password' };
    await createUser(credentials.email, credentials.password, ['user']);
    const token = (await api.login(credentials)).token;
    const setup = await call('POST', '/auth/2fa/setup', token);
    const secret = setup.json.secret as string;
    const step = Math.floor(Date.now() / 30_000);
    const enabled = await call('POST', '/auth/2fa/enable', token, {
      code: await generate({ secret, epoch: step * 30 + 1 }),
    });
    expect(enabled.status).toBe(200);

    const client = await newClient();
    const r = await request(client);
    const page = pageSession(() => e2e.stack.baseUrl);
    const asked = await signIn(page, r.query, credentials);
    expect([asked.status, asked.html.includes('Two-factor code')]).toEqual([200, true]);
    const wrong = await page.post({ ...asked.hidden, code: '000000' });
    expect(wrong.status).toBe(401);
    const consent = await page.post({ ...asked.hidden, code: await generate({ secret, epoch: (step + 1) * 30 + 1 }) });
    expect([consent.status, consent.html.includes('Allow access?')]).toEqual([200, true]);
    const allowed = await page.post({ ...consent.hidden, decision: 'allow' });
    const tokens = await exchange(client, new URL(allowed.location!), r.verifier, r.state);
    expect((await call('GET', '/auth/me', tokens.access_token)).json.email).toBe(credentials.email);
  });

  it('lets a confidential client introspect and revoke: revoking a refresh token revokes its grant', async () => {
    const client = await newClient({ is_confidential: true });
    expect(client.client_secret).toMatch(/^dplcs_/);
    const { url, verifier, state } = await authorize(client, USER);
    const tokens = await exchange(client, url, verifier, state);
    const c: oauth.Client = { client_id: client.client_id };
    const auth = oauth.ClientSecretBasic(client.client_secret!);
    const introspect = async (token: string) =>
      oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, token, options()));
    const access = await introspect(tokens.access_token);
    expect([access.active, access.sub, access.client_id]).toEqual([true, expect.any(String), client.client_id]);
    const refresh = await introspect(tokens.refresh_token!);
    expect([refresh.active, refresh.token_type, refresh.scope]).toEqual([true, 'refresh_token', tokens.scope]);

    // Without its secret, the confidential client gets nothing.
    const unauthenticated = await tokenForm({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    expect(unauthenticated.status).toBe(401);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, auth, tokens.refresh_token!, options()));
    expect((await introspect(tokens.refresh_token!)).active).toBe(false);
    expect((await introspect(tokens.access_token)).active).toBe(false);
    expect((await call('GET', '/deployments', tokens.access_token)).status).toBe(401);
    // The revoked grant's refresh token exchanges for nothing (the rotation's transaction checks the revocation)
    const basic = Buffer.from(`${client.client_id}:${client.client_secret!}`).toString('base64');
    const refused = await tokenForm(
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
      { authorization: `Basic ${basic}` },
    );
    expect([refused.status, refused.json['error']]).toEqual([400, 'invalid_grant']);
    expect(refused.json['error_description']).toBe('The refresh token is not valid, has expired, or was revoked.');
  });

  it('stops a deactivated client: no page, no refresh', async () => {
    const client = await newClient();
    const { url, verifier, state } = await authorize(client, USER);
    const tokens = await exchange(client, url, verifier, state);
    const listed = await call('GET', '/admin/oauth-clients', e2e.admin);
    const id = (listed.json as unknown as { id: string; client_id: string }[]).find(
      (c) => c.client_id === client.client_id,
    )!.id;
    expect((await call('DELETE', `/admin/oauth-clients/${id}`, e2e.admin)).status).toBe(204);
    const r = await request(client);
    expect((await pageSession(() => e2e.stack.baseUrl).open(r.query)).status).toBe(400);
    const refreshed = await tokenForm({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client.client_id,
    });
    expect([refreshed.status, refreshed.json.error]).toEqual([401, 'invalid_client']);
    // Tokens issued stay valid until they expire (spec, Authentication 9).
    expect((await call('GET', '/deployments', tokens.access_token)).status).toBe(200);
  });
});
