// Admin: identity providers over HTTP: the providers (the secret stored encrypted and answered as ***), their role
// mappings, discovery and the connection test against a real OIDC provider on loopback, the SSRF guard of both
// server-side requests, tenant isolation, and callers without the permission.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { dynamoClient, uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';
import { startOidcProvider, type OidcProvider } from '../../local/oidc-provider.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-admin-test', clientSecret: 'the-client-secret-0123456789' };
let stack: Stack;
let idp: OidcProvider;
let admin: string;
/** Answers HTML at /not-json/..., nothing at all at /hang/...; and a port where nothing listens. */
let odd: Server;
let oddHost: string;
let closedHost: string;

const listen = async (handler: Parameters<typeof createServer>[1]) => {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, host: `127.0.0.1:${(server.address() as AddressInfo).port}` };
};
const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const login = async (email: string, password: string) => (await api.login({ email, password })).token;

const settings = (realm: string) => ({
  name: `IdP ${realm}`,
  ...idp.endpoints(realm),
  client_id: CLIENT.clientId,
  client_secret: CLIENT.clientSecret,
});

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  ({ server: odd, host: oddHost } = await listen((req, res) => {
    if (req.url?.startsWith('/not-json/') === true) {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>a sign-in page</html>');
    } // /hang/...: never answers
  }));
  const closed = await listen(() => undefined);
  closedHost = closed.host;
  await close(closed.server);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('ssoadm')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: [idp.host, oddHost, closedHost].join(',') },
  });
  admin = await login(ADMIN.email, ADMIN.password);
});

afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
  if (odd !== undefined) await close(odd);
});

describe('identity providers', () => {
  it('creates, reads, lists, updates and deletes a provider; the secret is stored encrypted and shown as ***', async () => {
    // Act
    const created = await call('POST', '/admin/identity-providers', admin, settings('crud'));
    // Assess
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'IdP crud',
      type: 'oidc',
      issuer: `${idp.issuer}/realms/crud`,
      client_id: CLIENT.clientId,
      client_secret: '***',
      token_endpoint_auth_method: 'client_secret_basic',
      scopes: ['openid', 'email', 'profile'],
      userinfo_endpoint: null,
      id_token_signing_alg_values: ['RS256'],
      email_claim: 'email',
      groups_claim: 'groups',
      jit_provisioning: false,
      jit_tenant_id: null,
      jit_trust_unverified_email: false,
      link_by_email: false,
      trusted_for_2fa: false,
      enabled: true,
      tenant_id: null,
      linked_users: 0,
      redirect_uri: `${stack.env['PUBLIC_BASE_URL']}/api/v1/auth/sso/${created.json.id}/callback`,
    });
    const db = DynamoDBDocumentClient.from(dynamoClient(stack.dynamoEndpoint));
    const { Item } = await db.send(
      new GetCommand({ TableName: stack.tables['MainTable']!, Key: { pk: `IDP#${created.json.id}`, sk: 'PROVIDER' } }),
    );
    expect(Item?.['clientSecret']).toMatch(/^v1\./);
    expect(JSON.stringify(Item)).not.toContain(CLIENT.clientSecret);
    const byShortId = await call('GET', `/admin/identity-providers/${created.json.short_id}`, admin);
    expect(byShortId.json).toEqual(created.json);
    // duplicates
    const sameName = await call('POST', '/admin/identity-providers', admin, { ...settings('other'), name: 'idp CRUD' });
    const sameIssuer = await call('POST', '/admin/identity-providers', admin, { ...settings('crud'), name: 'Another' });
    expect([sameName.status, sameName.json.error.details.field]).toEqual([409, 'name']);
    expect([sameIssuer.status, sameIssuer.json.error.details.field]).toEqual([409, 'issuer']);
    // list with page and limit
    await call('POST', '/admin/identity-providers', admin, settings('second'));
    const page = await call('GET', '/admin/identity-providers?page=1&limit=1', admin);
    expect(page.json.meta).toMatchObject({ page: 1, limit: 1, has_next: true });
    expect(page.json.data).toHaveLength(1);
    expect(page.json.meta.total).toBeGreaterThanOrEqual(2);
    // update: *** keeps the secret, but not for a new issuer or token endpoint (issue 29): the secret is given again
    const keeping = await call('PUT', `/admin/identity-providers/${created.json.id}`, admin, {
      client_secret: '***',
      ...idp.endpoints('crud2'),
    });
    expect([keeping.status, keeping.json.error.details.fields[0].field]).toEqual([400, 'client_secret']);
    const renamed = await call('PUT', `/admin/identity-providers/${created.json.id}`, admin, {
      name: 'IdP renamed',
      client_secret: '***',
    });
    expect(renamed.status).toBe(200);
    // a new issuer moves its claim
    const updated = await call('PUT', `/admin/identity-providers/${created.json.id}`, admin, {
      client_secret: CLIENT.clientSecret,
      scopes: ['openid', 'groups'],
      jit_provisioning: true,
      ...idp.endpoints('crud2'),
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      name: 'IdP renamed',
      issuer: `${idp.issuer}/realms/crud2`,
      jit_provisioning: true,
    });
    const test = await call('POST', `/admin/identity-providers/${created.json.id}/test`, admin);
    expect(test.json.checks.find((c: { name: string }) => c.name === 'token_endpoint').passed).toBe(true);
    expect((await call('POST', '/admin/identity-providers', admin, settings('crud'))).status).toBe(201); // freed
    // delete
    expect((await call('DELETE', `/admin/identity-providers/${created.json.id}`, admin)).status).toBe(204);
    for (const [method, path] of [
      ['GET', `/admin/identity-providers/${created.json.id}`],
      ['PUT', `/admin/identity-providers/${created.json.id}`],
      ['DELETE', `/admin/identity-providers/${created.json.id}`],
      ['GET', `/admin/identity-providers/${created.json.id}/role-mappings`],
      ['POST', `/admin/identity-providers/${created.json.id}/test`],
      ['GET', '/admin/identity-providers/nope'],
    ] as const) {
      const reply = await call(method, path, admin, method === 'PUT' ? { name: 'x' } : undefined);
      expect([path, reply.status, reply.json.error.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('refuses settings a provider could not safely use', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const reply = await call('POST', '/admin/identity-providers', admin, { ...settings(uniqueName('bad')), ...body });
      return [reply.status, reply.json.error?.code, reply.json.error?.details?.fields?.[0]?.field];
    };
    expect(await refused({ issuer: 'http://idp.example.com' })).toEqual([400, 'VALIDATION_ERROR', 'issuer']);
    expect(await refused({ jwks_uri: 'https://169.254.169.254/keys' })).toEqual([400, 'VALIDATION_ERROR', 'jwks_uri']);
    expect(await refused({ token_endpoint: 'file:///etc/passwd' })).toEqual([
      400,
      'VALIDATION_ERROR',
      'token_endpoint',
    ]);
    expect(await refused({ scopes: ['email'] })).toEqual([400, 'VALIDATION_ERROR', 'scopes']);
    expect(await refused({ id_token_signing_alg_values: ['HS256'] })).toEqual([
      400,
      'VALIDATION_ERROR',
      'id_token_signing_alg_values.0',
    ]);
    expect(await refused({ jit_tenant_id: '00000000-0000-4000-8000-000000000000' })).toEqual([
      400,
      'VALIDATION_ERROR',
      'jit_tenant_id',
    ]);
    expect((await refused({ client_secret: '' }))[0]).toBe(400);
  });

  it('refuses a provider whose discovery document cannot be read now, saying why; nothing is stored or offered', async () => {
    // Prepare
    const before = (await call('GET', '/admin/identity-providers?limit=100', admin)).json.data;
    const signInBefore = (await call('GET', '/auth/sso', undefined)).json;
    const cases: [string, string, RegExp][] = [
      ['DNS', 'https://idp.does-not-exist.invalid', /host name does not resolve/],
      ['refused', `http://${closedHost}`, /refused the connection/],
      ['timeout', `http://${oddHost}/hang`, /did not answer in time/],
      ['not JSON', `http://${oddHost}/not-json`, /is not JSON/],
      ['not found', `${idp.issuer}/nothing-here`, /could not be read \(not 2xx\)/],
      ['not OIDC', `${idp.issuer}/not-oidc`, /not an OpenID Connect discovery document/],
    ];
    for (const [name, issuer, says] of cases) {
      // Act
      const reply = await call('POST', '/admin/identity-providers', admin, {
        ...settings(uniqueName('unreachable')),
        name: `Dead ${name}`,
        issuer,
      });
      // Assess: 400 on issuer, naming the URL read and the reason, never a transport code
      expect([name, reply.status, reply.json.error.code, reply.json.error.details.fields[0].field]).toEqual([
        name,
        400,
        'VALIDATION_ERROR',
        'issuer',
      ]);
      expect(reply.json.error.message).toContain(`Could not read ${issuer}/.well-known/openid-configuration: `);
      expect(reply.json.error.message).toMatch(says);
      expect(reply.json.error.message).not.toMatch(/ECONN|ENOTFOUND|EAI_/);
    }
    idp.setKnobs({ discoveryIssuer: 'https://someone-else.example' });
    const mismatch = await call('POST', '/admin/identity-providers', admin, settings(uniqueName('mismatch')));
    idp.setKnobs({});
    expect([mismatch.status, mismatch.json.error.details.fields[0].field]).toEqual([400, 'issuer']);
    expect(mismatch.json.error.message).toMatch(/names another issuer/);
    // nothing stored, no dead "Sign in with ..." button
    expect((await call('GET', '/admin/identity-providers?limit=100', admin)).json.data).toEqual(before);
    expect((await call('GET', '/auth/sso', undefined)).json).toEqual(signInBefore);
  });

  it('refuses an update that moves the issuer to a provider that cannot be reached; the provider is unchanged', async () => {
    // Prepare
    const created = await call('POST', '/admin/identity-providers', admin, settings(uniqueName('move')));
    expect(created.status).toBe(201);
    // Act
    const moved = await call('PUT', `/admin/identity-providers/${created.json.id}`, admin, {
      issuer: `http://${closedHost}`,
      client_secret: CLIENT.clientSecret,
    });
    // Assess
    expect([moved.status, moved.json.error.code, moved.json.error.details.fields[0].field]).toEqual([
      400,
      'VALIDATION_ERROR',
      'issuer',
    ]);
    expect(moved.json.error.message).toMatch(/refused the connection/);
    expect((await call('GET', `/admin/identity-providers/${created.json.id}`, admin)).json).toEqual(created.json);
    // a change that keeps the issuer does not ask the provider again; a reachable new issuer is fine
    const renamed = await call('PUT', `/admin/identity-providers/${created.json.id}`, admin, { name: 'Moved IdP' });
    expect(renamed.status).toBe(200);
    const reachable = await call('PUT', `/admin/identity-providers/${created.json.id}`, admin, {
      ...idp.endpoints(uniqueName('moved')),
      client_secret: CLIENT.clientSecret,
    });
    expect(reachable.status).toBe(200);
  });

  it('manages role mappings: a bare array, roles that exist, 404 for unknown ones', async () => {
    const provider = (await call('POST', '/admin/identity-providers', admin, settings(uniqueName('maps')))).json;
    const base = `/admin/identity-providers/${provider.id}/role-mappings`;
    // Act
    const created = await call('POST', base, admin, { claim_value: 'platform-team', role: 'operator' });
    // Assess
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      provider_id: provider.id,
      claim_value: 'platform-team',
      role: 'operator',
      tenant_id: null,
    });
    const unknownRole = await call('POST', base, admin, { claim_value: 'x', role: 'no-such-role' });
    expect([unknownRole.status, unknownRole.json.error.details.fields[0].field]).toEqual([400, 'role']);
    const updated = await call('PUT', `${base}/${created.json.id}`, admin, { claim_value: 'platform', role: 'user' });
    expect(updated.json).toMatchObject({ claim_value: 'platform', role: 'user' });
    expect((await call('PUT', `${base}/${created.json.short_id}`, admin, { role: 'nope' })).status).toBe(400);
    const list = await call('GET', base, admin);
    expect(list.json.map((m: { id: string; role: string }) => [m.id, m.role])).toEqual([[created.json.id, 'user']]);
    expect((await call('DELETE', `${base}/${created.json.id}`, admin)).status).toBe(204);
    expect((await call('GET', base, admin)).json).toEqual([]);
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await call('PUT', `${base}/${missing}`, admin, { role: 'user' })).status).toBe(404);
    expect((await call('DELETE', `${base}/${missing}`, admin)).status).toBe(404);
    expect(
      (
        await call('POST', `/admin/identity-providers/${missing}/role-mappings`, admin, {
          claim_value: 'x',
          role: 'user',
        })
      ).status,
    ).toBe(404);
  });

  it('discovers a provider’s endpoints, and refuses a mismatched issuer or a document that is not OIDC', async () => {
    // Act
    const found = await call('POST', '/admin/identity-providers/discover', admin, { url: `${idp.issuer}/realms/disc` });
    // Assess
    expect(found.status).toBe(200);
    expect(found.json).toMatchObject({
      ...idp.endpoints('disc'),
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
    });
    const viaWellKnown = await call('POST', '/admin/identity-providers/discover', admin, {
      url: `${idp.issuer}/realms/disc/.well-known/openid-configuration`,
    });
    expect(viaWellKnown.json.issuer).toBe(`${idp.issuer}/realms/disc`);
    idp.setKnobs({ discoveryIssuer: 'https://someone-else.example' });
    const mismatch = await call('POST', '/admin/identity-providers/discover', admin, {
      url: `${idp.issuer}/realms/disc`,
    });
    idp.setKnobs({});
    expect([mismatch.status, mismatch.json.error.message]).toEqual([400, expect.stringContaining('another issuer')]);
    const notOidc = await call('POST', '/admin/identity-providers/discover', admin, { url: `${idp.issuer}/not-oidc` });
    expect(notOidc.status).toBe(400);
    const missing = await call('POST', '/admin/identity-providers/discover', admin, {
      url: `${idp.issuer}/nothing-here`,
    });
    expect(missing.status).toBe(400);
  });

  it('refuses server-side requests to internal addresses, other schemes, and redirects to internal addresses', async () => {
    const stackPort = new URL(stack.baseUrl).port;
    const attempts = [
      `https://127.0.0.1:${stackPort}`,
      `http://127.0.0.1:${stackPort}`, // loopback, another port than the allowed one
      `https://localhost:${stackPort}`, // a name that resolves to loopback
      'https://169.254.169.254/latest/meta-data',
      'http://169.254.169.254',
      'https://[::1]',
      'https://[::ffff:127.0.0.1]',
      'https://[fd00::1]',
      'https://10.0.0.1',
      'https://192.168.1.1',
      'https://0.0.0.0',
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
      'ftp://idp.example.com',
      'javascript:alert(1)',
      'not a url',
      // an allowed host that redirects to internal addresses: every hop is checked
      idp.redirectingIssuer('http://169.254.169.254/latest/meta-data'),
      idp.redirectingIssuer('https://169.254.169.254/latest/meta-data'),
      idp.redirectingIssuer(`http://127.0.0.1:${stackPort}/api/v1/health`),
      idp.redirectingIssuer(`https://localhost:${stackPort}/`),
      idp.redirectingIssuer('file:///etc/passwd'),
    ];
    for (const url of attempts) {
      const reply = await call('POST', '/admin/identity-providers/discover', admin, { url });
      expect([url, reply.status, reply.json.error.code]).toEqual([url, 400, 'VALIDATION_ERROR']);
    }
    const metadata = await call('POST', '/admin/identity-providers/discover', admin, {
      url: idp.redirectingIssuer('https://169.254.169.254/latest/meta-data'),
    });
    expect(metadata.json.error.message).toMatch(/redirected to a URL that must not point to a private/);
    // a host name is refused by what it resolves to, at connection time (not by a failed connection)
    const named = await call('POST', '/admin/identity-providers/discover', admin, {
      url: `https://localhost:${stackPort}`,
    });
    expect(named.json.error.message).toMatch(/resolves to a private, loopback/);
  });

  it('tests a provider: 200 with each check, a wrong secret fails the token endpoint check', async () => {
    const provider = (await call('POST', '/admin/identity-providers', admin, settings(uniqueName('test')))).json;
    // Act
    const ok = await call('POST', `/admin/identity-providers/${provider.id}/test`, admin, {});
    // Assess
    expect(ok.status).toBe(200);
    expect(ok.json.success).toBe(true);
    expect(ok.json.checks.map((c: { name: string; passed: boolean }) => [c.name, c.passed])).toEqual([
      ['discovery', true],
      ['jwks', true],
      ['token_endpoint', true],
    ]);
    await call('PUT', `/admin/identity-providers/${provider.id}`, admin, { client_secret: 'wrong-secret' });
    const wrong = await call('POST', `/admin/identity-providers/${provider.id}/test`, admin);
    expect([wrong.status, wrong.json.success]).toEqual([200, false]);
    const token = wrong.json.checks.find((c: { name: string }) => c.name === 'token_endpoint');
    expect([token.passed, token.message]).toEqual([false, expect.stringContaining('invalid_client')]);
    await call('PUT', `/admin/identity-providers/${provider.id}`, admin, {
      jwks_uri: `${idp.issuer}/realms/x/missing`,
    });
    const jwks = (await call('POST', `/admin/identity-providers/${provider.id}/test`, admin)).json.checks[1];
    expect([jwks.name, jwks.passed]).toEqual(['jwks', false]);
  });

  it('keeps each tenant’s providers to itself, and refuses callers without the permission', async () => {
    // Prepare
    const tenantA = await call('POST', '/tenants', admin, { name: 'SSO A', slug: `sso-a-${Date.now()}` });
    const tenantB = await call('POST', '/tenants', admin, { name: 'SSO B', slug: `sso-b-${Date.now()}` });
    await createUser('sso-ta@example.com', 'ta-password', ['admin'], tenantA.json.id);
    await createUser('sso-tb@example.com', 'tb-password', ['admin'], tenantB.json.id);
    await createUser('sso-plain@example.com', 'plain-password', ['user']);
    const a = await login('sso-ta@example.com', 'ta-password');
    const b = await login('sso-tb@example.com', 'tb-password');
    const plain = await login('sso-plain@example.com', 'plain-password');
    // Act
    const ofA = await call('POST', '/admin/identity-providers', a, { ...settings('tenant-a'), jit_provisioning: true });
    // Assess
    expect([ofA.status, ofA.json.tenant_id, ofA.json.jit_tenant_id]).toEqual([201, tenantA.json.id, tenantA.json.id]);
    // the same issuer is another tenant's business (names and issuers are unique per tenant)
    expect((await call('POST', '/admin/identity-providers', b, settings('tenant-a'))).status).toBe(201);
    const ofAId = ofA.json.id;
    const listA = await call('GET', '/admin/identity-providers', a);
    expect(listA.json.data.map((p: { id: string }) => p.id)).toEqual([ofAId]);
    expect(
      (await call('GET', '/admin/identity-providers', b)).json.data.map((p: { id: string }) => p.id),
    ).not.toContain(ofAId);
    for (const [method, path, body] of [
      ['GET', `/admin/identity-providers/${ofAId}`, undefined],
      ['PUT', `/admin/identity-providers/${ofAId}`, { enabled: false }],
      ['DELETE', `/admin/identity-providers/${ofAId}`, undefined],
      ['POST', `/admin/identity-providers/${ofAId}/test`, undefined],
      ['GET', `/admin/identity-providers/${ofAId}/role-mappings`, undefined],
      ['POST', `/admin/identity-providers/${ofAId}/role-mappings`, { claim_value: 'x', role: 'user' }],
    ] as const) {
      const reply = await call(method, path, b, body);
      expect([path, reply.status]).toEqual([path, 404]);
    }
    expect((await call('GET', `/admin/identity-providers/${ofAId}`, a)).json.enabled).toBe(true);
    // a tenant's provider provisions into its tenant only, and maps only for it
    const elsewhere = await call('PUT', `/admin/identity-providers/${ofAId}`, a, { jit_tenant_id: tenantB.json.id });
    expect([elsewhere.status, elsewhere.json.error.code]).toEqual([403, 'FORBIDDEN']);
    const mapB = await call('POST', `/admin/identity-providers/${ofAId}/role-mappings`, a, {
      claim_value: 'x',
      role: 'user',
      tenant_id: tenantB.json.id,
    });
    expect(mapB.status).toBe(400);
    // the global admin sees every tenant's
    expect(
      (await call('GET', '/admin/identity-providers?limit=100', admin)).json.data.map((p: { id: string }) => p.id),
    ).toContain(ofAId);
    // no permission, no credential
    expect((await call('GET', '/admin/identity-providers', plain)).json.error.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await call('POST', '/admin/identity-providers/discover', plain, { url: idp.issuer })).status).toBe(403);
    expect((await call('GET', '/admin/identity-providers', undefined)).status).toBe(401);
  });
});
