// The authorization code flow in a real browser: Debian's chromium driven by playwright-core, with JavaScript
// switched off (the page must work without it). A loopback "application" receives the redirect; oauth4webapi
// validates it (state, iss), exchanges the code with PKCE and the token works on the API. Needs /usr/bin/chromium
// (`apt-get install chromium`; .ci/run installs it) or CHROMIUM_PATH; without it the test fails rather than skips.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { startOidcProvider, type OidcProvider } from '../../local/oidc-provider.js';
import { createUser } from '../support/users.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const IDP_CLIENT = { clientId: 'deployer-browser', clientSecret: 'idp-client-secret-for-the-browser' };
const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const USER = { email: 'browser@example.com', password: 'browser-password' };
/** Where the consent page's screenshot goes: SCREENSHOT_DIR=docs refreshes docs/oauth-consent.png. */
const SHOTS = process.env['SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'oauth-shots-'));

let stack: Stack;
let idp: OidcProvider;
let browser: Browser;
let app: Server;
let appPort: number;
const callbacks: URL[] = [];
const api = apiClient(() => stack.baseUrl);

const options = () => ({
  [oauth.allowInsecureRequests]: true,
  [oauth.customFetch]: (url: string, init: RequestInit) =>
    fetch(url.replace(/^http:\/\/localhost:\d+/, stack.baseUrl), init),
});
const issuer = () => new URL(`http://localhost:${stack.port}`);

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH).`);
  app = createServer((request, response) => {
    callbacks.push(new URL(request.url ?? '/', `http://127.0.0.1:${appPort}`));
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>App</title><p>Signed in</p>');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appPort = (app.address() as { port: number }).port;
  idp = await startOidcProvider(IDP_CLIENT);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('oauthb')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: idp.host, OIDC_JWKS_COOLDOWN_SECONDS: '0' },
  });
  await createUser(USER.email, USER.password, ['user']);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await idp?.stop();
  if (app !== undefined) await new Promise((resolve) => app.close(resolve));
});

describe('the authorization page in a browser', () => {
  it('signs in, shows the consent page, and hands a working code back to the application (no JavaScript)', async () => {
    const redirectUri = `http://127.0.0.1:${appPort}/callback`;
    const admin = (await api.login(ADMIN)).token;
    const created = await api.call('POST', '/api/v1/admin/oauth-clients', {
      token: admin,
      body: {
        name: 'Release dashboard',
        description: 'Shows what runs where',
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: [redirectUri],
        scopes: ['deployments:read', 'targets:read', 'users:create'],
        is_confidential: false,
      },
    });
    expect(created.status).toBe(201);
    const client: oauth.Client = { client_id: created.json.client_id as string };
    const as = await oauth.processDiscoveryResponse(
      issuer(),
      await oauth.discoveryRequest(issuer(), { ...options(), algorithm: 'oauth2' }),
    );
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope: 'deployments:read targets:read users:create',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 760, height: 760 } });
    const page = await context.newPage();
    await page.goto(url.toString());
    expect(await page.title()).toBe('Sign in');
    expect(await page.textContent('main')).toContain('Release dashboard');

    await page.fill('#email', USER.email);
    await page.fill('#password', 'wrong-password');
    await page.click('button[type=submit]');
    expect(await page.textContent('[role=alert]')).toContain('Invalid email or password');

    await page.fill('#email', USER.email);
    await page.fill('#password', USER.password);
    await page.click('button[type=submit]');
    expect(await page.title()).toBe('Allow access?');
    const text = (await page.textContent('main')) ?? '';
    expect(text).toContain(`Signed in as ${USER.email}`);
    expect(text).toContain('deployments:read');
    expect(text).toContain('not yours to give'); // users:create: the user does not hold it
    await page.screenshot({ path: join(SHOTS, 'oauth-consent.png') });
    expect(readFileSync(join(SHOTS, 'oauth-consent.png')).subarray(1, 4).toString()).toBe('PNG');

    await page.click('button[value=allow]');
    await page.waitForURL((u) => u.pathname === '/callback');
    expect(await page.textContent('p')).toBe('Signed in');
    const callback = callbacks.filter((u) => u.pathname === '/callback').at(-1)!;
    expect(callback.searchParams.get('state')).toBe(state);

    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, options()),
    );
    expect(tokens.scope).toBe('deployments:read targets:read');
    const me = await api.call('GET', '/api/v1/auth/me', { token: tokens.access_token });
    expect([me.status, me.json.email]).toEqual([200, USER.email]);
    await context.close();
  });

  it('sends the user back with access_denied when they deny', async () => {
    const redirectUri = `http://127.0.0.1:${appPort}/denied`;
    const admin = (await api.login(ADMIN)).token;
    const created = await api.call('POST', '/api/v1/admin/oauth-clients', {
      token: admin,
      body: {
        name: 'Curious tool',
        grant_types: ['authorization_code'],
        redirect_uris: [redirectUri],
        scopes: ['deployments:read'],
        is_confidential: false,
      },
    });
    const verifier = oauth.generateRandomCodeVerifier();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: created.json.client_id as string,
      redirect_uri: redirectUri,
      state: 'keep-me',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${issuer().origin}/oauth/authorize?${query}`);
    await page.fill('#email', USER.email);
    await page.fill('#password', USER.password);
    await page.click('button[type=submit]');
    await page.click('button[value=deny]');
    await page.waitForURL((u) => u.pathname === '/denied');
    const back = new URL(page.url());
    expect([back.searchParams.get('error'), back.searchParams.get('state')]).toEqual(['access_denied', 'keep-me']);
    await context.close();
  });

  it('signs in with an identity provider from the page and comes back to consent (no JavaScript)', async () => {
    const redirectUri = `http://127.0.0.1:${appPort}/sso-app`;
    const admin = (await api.login(ADMIN)).token;
    const provider = await api.call('POST', '/api/v1/admin/identity-providers', {
      token: admin,
      body: {
        name: 'Corp SSO',
        ...idp.endpoints('browser'),
        client_id: IDP_CLIENT.clientId,
        client_secret: IDP_CLIENT.clientSecret,
        scopes: ['openid', 'email', 'groups'],
        jit_provisioning: true,
      },
    });
    expect(provider.status).toBe(201);
    const mapping = await api.call('POST', `/api/v1/admin/identity-providers/${provider.json.id}/role-mappings`, {
      token: admin,
      body: { claim_value: 'release', role: 'user' },
    });
    expect(mapping.status).toBe(201);
    idp.signIn({ sub: 'browser-sso', email: 'sso-browser@corp.example', email_verified: true, groups: ['release'] });
    const created = await api.call('POST', '/api/v1/admin/oauth-clients', {
      token: admin,
      body: {
        name: 'SSO dashboard',
        grant_types: ['authorization_code'],
        redirect_uris: [redirectUri],
        scopes: ['deployments:read'],
        is_confidential: false,
      },
    });
    const verifier = oauth.generateRandomCodeVerifier();
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: created.json.client_id as string,
      redirect_uri: redirectUri,
      state: 'sso-state',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${issuer().origin}/oauth/authorize?${query}`);
    await page.click('a:has-text("Corp SSO")');
    await page.waitForURL((u) => u.pathname === '/oauth/authorize/sso');
    expect(await page.title()).toBe('Allow access?');
    expect(await page.textContent('main')).toContain('sso-browser@corp.example');
    await page.click('button[value=allow]');
    await page.waitForURL((u) => u.pathname === '/sso-app');
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('sso-state');
    const token = await fetch(`${stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: created.json.client_id as string,
        code: back.searchParams.get('code')!,
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }),
    });
    expect(token.status).toBe(200);
    await context.close();
  });
});
