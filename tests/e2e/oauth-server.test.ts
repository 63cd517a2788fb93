// The OAuth 2.0 authorization server over HTTP, driven by a real client library (oauth4webapi): discovery, the
// client_credentials grant with both client authentication methods, tokens used on the API within their scope and
// their creator's current permissions, revocation (RFC 7009), introspection (RFC 7662), rotated secrets,
// deactivated clients, and the RFC 6749 errors of bad requests.
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('oauths');
let as: oauth.AuthorizationServer;

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const login = async (email: string, password: string): Promise<string> => (await api.login({ email, password })).token;

/** The issuer is the public base URL (http://localhost:<port>); requests go to the stack's own address. */
const options = () => ({
  [oauth.allowInsecureRequests]: true,
  [oauth.customFetch]: (url: string, init: RequestInit) =>
    fetch(url.replace(/^http:\/\/localhost:\d+/, e2e.stack.baseUrl), init),
});
const issuer = () => new URL(`http://localhost:${e2e.stack.port}`);

const newClient = async (token: string, body: Record<string, unknown> = {}) => {
  const created = await call('POST', '/admin/oauth-clients', token, {
    name: 'pipeline',
    grant_types: ['client_credentials'],
    scopes: ['deployments:read', 'targets:read'],
    ...body,
  });
  expect(created.status).toBe(201);
  return created.json as { id: string; client_id: string; client_secret: string };
};

const tokenFor = async (
  client: { client_id: string; client_secret: string },
  scope?: string,
  auth: 'basic' | 'post' = 'basic',
) => {
  const c: oauth.Client = { client_id: client.client_id };
  const authn =
    auth === 'basic' ? oauth.ClientSecretBasic(client.client_secret) : oauth.ClientSecretPost(client.client_secret);
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    c,
    authn,
    new URLSearchParams(scope === undefined ? {} : { scope }),
    options(),
  );
  return oauth.processClientCredentialsResponse(as, c, response);
};

/** A raw form POST to an /oauth endpoint. */
const form = async (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
  const response = await fetch(`${e2e.stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as Record<string, unknown>,
  };
};

beforeAll(async () => {
  as = await oauth.processDiscoveryResponse(
    issuer(),
    await oauth.discoveryRequest(issuer(), { ...options(), algorithm: 'oauth2' }),
  );
});

describe('the OAuth 2.0 authorization server', () => {
  it('publishes its metadata (RFC 8414) with the public base URL as issuer', () => {
    expect(as).toMatchObject({
      issuer: issuer().href.replace(/\/$/, ''),
      token_endpoint: `${issuer().origin}/oauth/token`,
      jwks_uri: `${issuer().origin}/oauth/jwks`,
      revocation_endpoint: `${issuer().origin}/oauth/revoke`,
      introspection_endpoint: `${issuer().origin}/oauth/introspect`,
      authorization_endpoint: `${issuer().origin}/oauth/authorize`,
      grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    });
    expect(as.scopes_supported).toHaveLength(57);
  });

  it('issues client_credentials tokens by Basic and by form secret that work on the API within their scope only', async () => {
    // Prepare
    const client = await newClient(e2e.admin);
    // Act
    const basic = await tokenFor(client);
    const post = await tokenFor(client, 'deployments:read', 'post');
    // Assess
    expect(basic).toMatchObject({ token_type: 'bearer', scope: 'deployments:read targets:read' });
    expect(basic.expires_in).toBeGreaterThan(0);
    expect(post.scope).toBe('deployments:read');
    expect((await call('GET', '/deployments', basic.access_token)).status).toBe(200);
    expect((await call('GET', '/targets', basic.access_token)).status).toBe(200);
    expect((await call('GET', '/targets', post.access_token)).json.error.code).toBe('INSUFFICIENT_PERMISSIONS');
    // the client's creator is an admin, but the token is not
    expect((await call('GET', '/admin/users', basic.access_token)).status).toBe(403);
    expect((await call('POST', '/auth/api-keys', basic.access_token, { name: 'k', scopes: [] })).status).toBe(403);
    expect((await call('POST', '/auth/sse-token', basic.access_token, {})).status).toBe(403);
    // JWT access token: header typ at+jwt, claims client_id, scope, sub = client_id
    const [header, payload] = basic.access_token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(payload).toMatchObject({
      client_id: client.client_id,
      sub: client.client_id,
      scope: 'deployments:read targets:read',
    });
  });

  it('refuses scopes beyond the client’s, and follows its creator’s current permissions', async () => {
    // Prepare: a manager who may read deployments and manage clients
    const role = await call('POST', '/admin/roles', e2e.admin, { name: 'pipeline-owner' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, e2e.admin, {
      permissions: ['oauth_clients:create', 'oauth_clients:read', 'deployments:read'],
    });
    await createUser('owner@example.com', 'owner-password', ['pipeline-owner']);
    const owner = await login('owner@example.com', 'owner-password');
    const client = await newClient(owner, { scopes: ['deployments:read'] });
    // Act + Assess
    await expect(tokenFor(client, 'deployments:read users:create')).rejects.toMatchObject({ error: 'invalid_scope' });
    const token = (await tokenFor(client)).access_token;
    expect((await call('GET', '/deployments', token)).status).toBe(200);
    await call('POST', `/admin/roles/${role.json.id}/permissions/remove`, e2e.admin, {
      permissions: ['deployments:read'],
    });
    expect((await call('GET', '/deployments', token)).json.error.code).toBe('INSUFFICIENT_PERMISSIONS');
  });

  it('revokes (RFC 7009) and introspects (RFC 7662) a client’s own tokens only', async () => {
    // Prepare
    const mine = await newClient(e2e.admin);
    const other = await newClient(e2e.admin);
    const token = (await tokenFor(mine)).access_token;
    const introspect = async (client: { client_id: string; client_secret: string }, t: string) =>
      oauth.processIntrospectionResponse(
        as,
        { client_id: client.client_id },
        await oauth.introspectionRequest(
          as,
          { client_id: client.client_id },
          oauth.ClientSecretBasic(client.client_secret),
          t,
          options(),
        ),
      );
    const revoke = async (client: { client_id: string; client_secret: string }, t: string) =>
      oauth.processRevocationResponse(
        await oauth.revocationRequest(
          as,
          { client_id: client.client_id },
          oauth.ClientSecretPost(client.client_secret),
          t,
          options(),
        ),
      );
    // Act + Assess: introspection
    expect(await introspect(mine, token)).toMatchObject({
      active: true,
      client_id: mine.client_id,
      scope: 'deployments:read targets:read',
      token_type: 'Bearer',
    });
    expect(await introspect(other, token)).toEqual({ active: false });
    expect(await introspect(mine, 'not-a-token')).toEqual({ active: false });
    // revocation by another client does nothing; by its own client it ends the token at once
    await revoke(other, token);
    expect((await call('GET', '/deployments', token)).status).toBe(200);
    await revoke(mine, token);
    await revoke(mine, 'garbage');
    expect((await call('GET', '/deployments', token)).status).toBe(401);
    expect(await introspect(mine, token)).toEqual({ active: false });
  });

  it('stops a rotated secret at once, and a deactivated client gets no new tokens while issued ones stay valid', async () => {
    // Prepare
    const client = await newClient(e2e.admin);
    const issued = (await tokenFor(client)).access_token;
    // Act: rotate
    const rotated = await call('POST', `/admin/oauth-clients/${client.id}/rotate-secret`, e2e.admin);
    // Assess
    // (a 401 with a WWW-Authenticate challenge: the library reports the challenge)
    await expect(tokenFor(client)).rejects.toMatchObject({ status: 401, code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE' });
    const fresh = { client_id: client.client_id, client_secret: rotated.json.client_secret as string };
    expect((await tokenFor(fresh)).access_token).toBeTruthy();
    // Act: deactivate
    expect((await call('DELETE', `/admin/oauth-clients/${client.id}`, e2e.admin)).status).toBe(204);
    // Assess
    await expect(tokenFor(fresh)).rejects.toMatchObject({ status: 401, code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE' });
    expect((await call('GET', '/deployments', issued)).status).toBe(200);
  });

  it('limits token requests per client (5 a second, bursts of 20) with 429 and Retry-After; other clients go on', async () => {
    // Prepare
    const busy = await newClient(e2e.admin);
    const calm = await newClient(e2e.admin);
    const basic = (c: { client_id: string; client_secret: string }) => ({
      authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`,
    });
    // Act: 60 token requests, 10 at a time
    const started = Date.now();
    const answers: Awaited<ReturnType<typeof form>>[] = [];
    for (let batch = 0; batch < 6; batch += 1)
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 10 }, () => form('/oauth/token', { grant_type: 'client_credentials' }, basic(busy))),
        )),
      );
    const seconds = (Date.now() - started) / 1000;
    // Assess: at most the burst plus what refilled meanwhile; the rest refused with a hint
    const allowed = answers.filter((a) => a.status === 200).length;
    const refused = answers.filter((a) => a.status === 429);
    expect(allowed).toBeLessThanOrEqual(20 + Math.ceil(5 * seconds) + 1);
    expect(allowed + refused.length).toBe(60);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.json.error).toBe('temporarily_unavailable');
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await form('/oauth/token', { grant_type: 'client_credentials' }, basic(calm))).status).toBe(200);
  });

  it('answers bad requests with RFC 6749 errors, 401 and WWW-Authenticate for client authentication', async () => {
    const client = await newClient(e2e.admin);
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const wrong = await form(
      '/oauth/token',
      { grant_type: 'client_credentials' },
      {
        authorization: `Basic ${Buffer.from(`${client.client_id}:nope`).toString('base64')}`,
      },
    );
    expect([wrong.status, wrong.json.error, wrong.headers.get('www-authenticate')?.startsWith('Basic')]).toEqual([
      401,
      'invalid_client',
      true,
    ]);
    expect(wrong.headers.get('cache-control')).toBe('no-store');
    const unknown = await form('/oauth/token', {
      grant_type: 'client_credentials',
      client_id: 'dplc_x',
      client_secret: 'y',
    });
    expect([unknown.status, unknown.json.error]).toEqual([401, 'invalid_client']);
    expect((await form('/oauth/token', {}, { authorization: basic })).json.error).toBe('invalid_request');
    const password = await form('/oauth/token', { grant_type: 'password' }, { authorization: basic });
    expect([password.status, password.json.error]).toEqual([400, 'unsupported_grant_type']);
    const both = await form(
      '/oauth/token',
      { grant_type: 'client_credentials', client_secret: client.client_secret },
      {
        authorization: basic,
      },
    );
    expect(both.json.error).toBe('invalid_request');
    const json = await fetch(`${e2e.stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: basic },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect([json.status, ((await json.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
    const twice = await fetch(`${e2e.stack.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: 'grant_type=client_credentials&grant_type=client_credentials',
    });
    expect(((await twice.json()) as { error: string }).error).toBe('invalid_request');
    const noToken = await form('/oauth/revoke', {}, { authorization: basic });
    expect([noToken.status, noToken.json.error]).toEqual([400, 'invalid_request']);
    const noClient = await form('/oauth/introspect', { token: 'x' });
    expect([noClient.status, noClient.json.error]).toEqual([401, 'invalid_client']);
  });
});
