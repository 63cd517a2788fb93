// The spec's error codes for services we call on the caller's behalf, and its page sizes, over HTTP against the real
// local stack (issue 30): an identity provider that fails at the sign-in callback (its token endpoint answers 502,
// cannot be reached, its JWKS is not served) is 500 EXTERNAL_SERVICE_ERROR, while a provider that refuses the code
// stays 401 INVALID_CREDENTIALS; the analysis test against a failing provider keeps its endpoint's 503 with
// EXTERNAL_SERVICE_ERROR; no answer shows the other side's status or body, and nothing is created or changed. Every
// list refuses a limit over 100 with 400 VALIDATION_ERROR. (CONFIGURATION_ERROR: error-codes-config.test.ts, a stack
// of its own.)
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../local/stack.js';
import { uniqueName } from '../../support/aws.js';
import { browser, type Hop } from '../../support/browser.js';
import { apiClient } from '../../support/http.js';
import { startOidcProvider, type OidcProvider } from '../../../local/oidc-provider.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-errors', clientSecret: 'idp-client-secret-errors-123456' };
const UPSTREAM_SECRET = 'upstream-body-with-internal-details';
let stack: Stack;
let idp: OidcProvider;
let admin: string;
/** A provider that fails: every request answers `status` with a body that must never be shown. */
let broken: Server;
let brokenHost = '';
/** A port nothing listens on (allowed, so the request is made and fails to connect). */
let closedHost = '';

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token, body });

const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
  const server = createServer(handler);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, host: `127.0.0.1:${(server.address() as AddressInfo).port}` };
};
const close = (server: Server) =>
  new Promise<void>((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  ({ server: broken, host: brokenHost } = await listen((req, res) => {
    req.resume();
    const status = req.url === '/token' ? 502 : 503;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`${UPSTREAM_SECRET} status ${status}`);
  }));
  const closed = await listen(() => undefined);
  closedHost = closed.host;
  await close(closed.server);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('errcodes')}-`,
    bootstrapAdmin: ADMIN,
    env: {
      OIDC_ALLOWED_HOSTS: [idp.host, brokenHost, closedHost].join(','),
      OIDC_JWKS_COOLDOWN_SECONDS: '0',
      ANALYSIS_ALLOWED_HOSTS: [brokenHost, closedHost].join(','),
    },
  });
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
  if (broken !== undefined) await close(broken);
});

/** A provider record of the test provider's realm, with some endpoints or the secret replaced. */
const newProvider = async (overrides: Record<string, unknown>) => {
  const reply = await call('POST', '/admin/identity-providers', admin, {
    name: uniqueName('idp'),
    ...idp.endpoints(uniqueName('realm')),
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
    scopes: ['openid', 'email'],
    jit_provisioning: true,
    ...overrides,
  });
  expect(reply.status).toBe(201);
  return reply.json as { id: string };
};

/** A browser signs `email` in at the provider and comes back to the callback: the callback's answer. */
const callbackOf = async (providerId: string, email: string): Promise<Hop> => {
  idp.signIn({ sub: `sub-${email}`, email, email_verified: true });
  const b = browser(() => stack.baseUrl);
  const start = await b.visit(`/api/v1/auth/sso/${providerId}`);
  expect(start.status).toBe(302);
  const atProvider = await b.visit(start.location!);
  expect(atProvider.status).toBe(302);
  return b.visit(atProvider.location!);
};

/** What the attack aimed at: an account for the email, a provider's linked users. */
const usersNamed = async (email: string) =>
  (await call('GET', `/admin/users?search=${encodeURIComponent(email)}`, admin)).json.data as unknown[];
const linkedUsers = async (id: string) =>
  (await call('GET', `/admin/identity-providers/${id}`, admin)).json.linked_users as number;

const expectNoInternals = (hop: { text: string }) => {
  expect(hop.text).not.toContain(UPSTREAM_SECRET);
  expect(hop.text).not.toMatch(/\b50[23]\b/);
  expect(hop.text).not.toContain(brokenHost);
  expect(hop.text).not.toMatch(/at \w+ \(|node:internal|ECONNREFUSED/);
};

describe('an identity provider that fails at the sign-in callback', () => {
  it.each([
    [
      'its token endpoint answers 502',
      () => ({ token_endpoint: `http://${brokenHost}/token` }),
      /token endpoint failed \(not 2xx\)/,
    ],
    [
      'its token endpoint cannot be reached',
      () => ({ token_endpoint: `http://${closedHost}/token` }),
      /token endpoint|reached|connect/i,
    ],
    ['its JWKS answers 503', () => ({ jwks_uri: `http://${brokenHost}/jwks` }), /JWKS could not be read \(not 2xx\)/],
  ])('%s: 500 EXTERNAL_SERVICE_ERROR, a guarded sentence, no account, no session', async (_case, endpoints, says) => {
    // Prepare
    const provider = await newProvider(endpoints());
    const email = `${uniqueName('ext')}@corp.example`;
    // Act
    const callback = await callbackOf(provider.id, email);
    // Assess
    expect(callback.status).toBe(500);
    expect(Object.keys(callback.json)).toEqual(['error']);
    expect(callback.json.error).toEqual({
      code: 'EXTERNAL_SERVICE_ERROR',
      message: expect.stringMatching(says),
      details: { request_id: expect.any(String) },
    });
    expect(callback.json.error.message).toMatch(/^The identity provider did not complete the sign-in: /);
    expectNoInternals(callback);
    expect(callback.setCookies.filter((c) => c.startsWith('deployer_refresh='))).toEqual([]);
    expect(await usersNamed(email)).toEqual([]);
    expect(await linkedUsers(provider.id)).toBe(0);
  });

  it('a provider that refuses the code (invalid_client) stays 401 INVALID_CREDENTIALS, not a server error', async () => {
    // Prepare: a record with a client secret the provider does not know
    const provider = await newProvider({ client_secret: 'not-the-secret-the-provider-knows' });
    const email = `${uniqueName('refused')}@corp.example`;
    // Act
    const callback = await callbackOf(provider.id, email);
    // Assess
    expect([callback.status, callback.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect(callback.json.error.message).toMatch(/refused the code \(not 2xx: invalid_client\)/);
    expect(await usersNamed(email)).toEqual([]);
  });
});

describe('the analysis test against a provider that fails', () => {
  it.each([
    ['answers 503', () => `http://${brokenHost}/v1`],
    ['cannot be reached', () => `http://${closedHost}/v1`],
  ])('%s: the endpoint’s 503 with EXTERNAL_SERVICE_ERROR, settings unchanged', async (_case, url) => {
    // Prepare
    const settings = {
      provider: 'openai_compatible',
      provider_url: url(),
      provider_model: 'diagnose-1',
      provider_api_key: 'sk-errors-test',
      provider_timeout_seconds: 2,
      fallback_to_rules: false,
    };
    expect((await call('PUT', '/admin/analysis/settings', admin, settings)).status).toBe(200);
    const before = (await call('GET', '/admin/analysis/settings', admin)).json;
    // Act
    const reply = await call('POST', '/admin/analysis/test', admin, { log: 'E: Unable to locate package x' });
    // Assess
    expect(reply.status).toBe(503);
    expect(reply.json.error).toEqual({
      code: 'EXTERNAL_SERVICE_ERROR',
      message: expect.stringMatching(/^The analysis provider did not answer \(.+\) and fallback_to_rules is off\.$/),
      details: { request_id: expect.any(String) },
    });
    expectNoInternals({ text: JSON.stringify(reply.json) });
    expect((await call('GET', '/admin/analysis/settings', admin)).json).toEqual(before);
    await call('POST', '/admin/analysis/settings/restore', admin);
  });
});

describe('page sizes', () => {
  it('refuses a limit over 100 on every kind of list with 400 VALIDATION_ERROR naming limit, and takes 100', async () => {
    // Prepare
    const someId = '00000000-0000-4000-8000-000000000000';
    const lists = ['/admin/analysis/requests', `/deployments/${someId}/logs/history`, '/deployments', '/targets'];
    const countBefore = (await call('GET', '/admin/analysis/requests?limit=100', admin)).json.meta.total as number;
    for (const list of lists)
      for (const limit of ['101', '500', '0']) {
        // Act
        const reply = await call('GET', `${list}?limit=${limit}`, admin);
        // Assess
        expect([list, limit, reply.status, reply.json.error.code]).toEqual([list, limit, 400, 'VALIDATION_ERROR']);
        expect(reply.json.error.details.fields).toEqual([
          expect.objectContaining({ field: 'limit', code: 'VALIDATION_ERROR' }),
        ]);
      }
    const full = await call('GET', '/admin/analysis/requests?limit=100', admin);
    expect([full.status, full.json.meta.limit, full.json.meta.total]).toEqual([200, 100, countBefore]);
    const byDefault = await call('GET', '/admin/analysis/requests', admin);
    expect(byDefault.json.meta.limit).toBe(50);
  });
});
