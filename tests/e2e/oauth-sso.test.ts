// The OAuth authorization page with single sign-on: "Sign in with <provider>" on the page goes through a real OIDC
// provider (local/oidc-provider.ts) and comes back to the page's consent step; the code then works like one
// from a password sign-in. A user with 2FA gives the code on the page unless the provider is trusted for it; the way
// back is bound to the browser that started it.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { browser, type Hop } from '../support/browser.js';
import { apiClient } from '../support/http.js';
import { hiddenFields as hidden } from '../support/oauth-page.js';
import { startOidcProvider, type OidcProvider } from '../../local/oidc-provider.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-test', clientSecret: 'idp-client-secret-1234567890' };
const REDIRECT = 'http://127.0.0.1:8766/callback';
let stack: Stack;
let idp: OidcProvider;
let admin: string;

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

const newProvider = async (overrides: Record<string, unknown> = {}) => {
  const reply = await call('POST', '/admin/identity-providers', admin, {
    name: uniqueName('Corp SSO'),
    ...idp.endpoints(uniqueName('realm')),
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
    scopes: ['openid', 'email', 'profile', 'groups'],
    jit_provisioning: true,
    ...overrides,
  });
  expect(reply.status).toBe(201);
  const provider = reply.json as { id: string; name: string };
  // Members of `release` get the user role (deployments:read among its permissions).
  const mapping = await call('POST', `/admin/identity-providers/${provider.id}/role-mappings`, admin, {
    claim_value: 'release',
    role: 'user',
  });
  expect(mapping.status).toBe(201);
  return provider;
};

const newClient = async () => {
  const created = await call('POST', '/admin/oauth-clients', admin, {
    name: 'Release dashboard',
    grant_types: ['authorization_code'],
    redirect_uris: [REDIRECT],
    scopes: ['deployments:read'],
    is_confidential: false,
  });
  expect(created.status).toBe(201);
  return created.json as { client_id: string };
};

/** Opens the page, follows "Sign in with <provider>" through the provider and back: every hop after the click. */
const viaProvider = async (b: ReturnType<typeof browser>, client: { client_id: string }, providerName: string) => {
  const verifier = oauth.generateRandomCodeVerifier();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    state: 'st-1',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const page = await b.visit(`/oauth/authorize?${query}`);
  expect(page.status).toBe(200);
  const link = new RegExp(`<a class="button secondary" href="([^"]+)">${providerName}</a>`).exec(page.text);
  expect(link).not.toBeNull();
  const hops = await b.navigate(link![1]!.replace(/&amp;/g, '&'));
  return { hops, verifier, last: hops.at(-1)! };
};

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('oauthsso')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: idp.host, OIDC_JWKS_COOLDOWN_SECONDS: '0' },
  });
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
});

describe('the authorization page with single sign-on', () => {
  it('signs in through the provider and comes back to consent; the code works like a password sign-in’s', async () => {
    const provider = await newProvider();
    const client = await newClient();
    idp.signIn({ sub: 'sso-user-1', email: 'sso1@corp.example', email_verified: true, groups: ['release'] });
    const b = browser(() => stack.baseUrl);
    const { hops, verifier, last } = await viaProvider(b, client, provider.name);

    // Assess: the provider, the callback (no API session), the page's way back, then consent
    expect(hops.map((h: Hop) => h.status)).toEqual([302, 302, 303, 200]);
    expect(hops[2]!.location).toMatch(/^\/oauth\/authorize\/sso\?request=.+&sso=/);
    expect(hops[2]!.setCookies.some((c) => c.startsWith('deployer_refresh='))).toBe(false);
    expect(last.text).toContain('Allow access?');
    expect(last.text).toContain('sso1@corp.example');

    const allowed = await b.visit('/oauth/consent', { form: { ...hidden(last.text), decision: 'allow' } });
    expect(allowed.status).toBe(303);
    const url = new URL(allowed.location!);
    expect(url.searchParams.get('state')).toBe('st-1');
    const token = await fetch(`${stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: client.client_id,
        code: url.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }),
    });
    const tokens = (await token.json()) as { access_token: string; scope: string };
    expect([token.status, tokens.scope]).toEqual([200, 'deployments:read']);
    expect((await call('GET', '/auth/me', tokens.access_token)).json.email).toBe('sso1@corp.example');
  });

  it('refuses the way back in another browser, and a forged or missing proof', async () => {
    const provider = await newProvider();
    const client = await newClient();
    idp.signIn({ sub: 'sso-user-2', email: 'sso2@corp.example', email_verified: true, groups: ['release'] });
    const b = browser(() => stack.baseUrl);
    const { hops } = await viaProvider(b, client, provider.name);
    const wayBack = hops[2]!.location!;
    // Another browser (no CSRF cookie of this page): refused.
    const other = await browser(() => stack.baseUrl).visit(wayBack);
    expect([other.status, other.text.includes('expired')]).toEqual([400, true]);
    // The same browser, the proof changed or dropped: refused.
    const url = new URL(wayBack, stack.baseUrl);
    url.searchParams.set('sso', `${url.searchParams.get('sso')}x`);
    expect((await b.visit(url.toString())).status).toBe(400);
    url.searchParams.delete('sso');
    expect((await b.visit(url.toString())).status).toBe(400);
  });

  it('asks a user with 2FA for the code on the page unless the provider is trusted for it', async () => {
    const { generate } = await import('otplib');
    const provider = await newProvider();
    const client = await newClient();
    idp.signIn({ sub: 'sso-user-3', email: 'sso3@corp.example', email_verified: true, groups: ['release'] });
    // First sign-in provisions the user; they turn 2FA on with a password-less session from the SSO callback.
    const first = browser(() => stack.baseUrl);
    const started = await first.visit(`/api/v1/auth/sso/${provider.id}?return_to=/`);
    await first.navigate(started.location!);
    const refresh = await api.call('POST', '/api/v1/auth/refresh', {
      cookie: `deployer_refresh=${first.cookie('deployer_refresh')}`,
    });
    const token = refresh.json.access_token as string;
    const secret = (await call('POST', '/auth/2fa/setup', token)).json.secret as string;
    const step = Math.floor(Date.now() / 30_000);
    expect(
      (await call('POST', '/auth/2fa/enable', token, { code: await generate({ secret, epoch: step * 30 + 1 }) }))
        .status,
    ).toBe(200);

    const b = browser(() => stack.baseUrl);
    const { last } = await viaProvider(b, client, provider.name);
    expect(last.text).toContain('Two-factor code');
    const consent = await b.visit('/oauth/consent', {
      form: { ...hidden(last.text), code: await generate({ secret, epoch: (step + 1) * 30 + 1 }) },
    });
    expect([consent.status, consent.text.includes('Allow access?')]).toEqual([200, true]);

    expect(
      (await call('PUT', `/admin/identity-providers/${provider.id}`, admin, { trusted_for_2fa: true })).status,
    ).toBe(200);
    const trusted = await viaProvider(
      browser(() => stack.baseUrl),
      client,
      provider.name,
    );
    expect(trusted.last.text).toContain('Allow access?');
  });
});
