// Delegated power through single sign-on (issue 29), attacked over HTTP against the local stack with a real OpenID
// Connect provider on loopback: a tenant's identity provider signs in, maps roles for and provisions only what its
// tenant may have, a link does not outlive the user's move out of the tenant, and the stored client secret is never
// sent to a destination changed without it. Each attack is refused, and what it aimed at is read back unchanged.
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../../local/stack.js';
import { DynamoIdentityProviderRepository } from '../../../infra/dynamodb/identity-provider-repository.js';
import { keys } from '../../../infra/dynamodb/keys.js';
import { dynamoClient, uniqueName } from '../../support/aws.js';
import { browser } from '../../support/browser.js';
import { apiClient } from '../../support/http.js';
import { startOidcProvider, type OidcProvider, type OidcUser } from '../../../local/oidc-provider.js';
import { createUser } from '../../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-delegation', clientSecret: 'idp-client-secret-delegation-0123' };
let stack: Stack;
let idp: OidcProvider;
let db: DynamoDBDocumentClient;
let admin: string;
let tenantT: string;
let tenantU: string;
let tenantAdmin: string;

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

/** A provider of tenant T, made by T's admin (just-in-time provisioning on). */
const tenantProvider = async (overrides: Record<string, unknown> = {}) => {
  const reply = await call('POST', '/admin/identity-providers', tenantAdmin, {
    name: uniqueName('idp-t'),
    ...idp.endpoints(uniqueName('realm')),
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
    scopes: ['openid', 'email', 'profile', 'groups'],
    jit_provisioning: true,
    ...overrides,
  });
  expect([reply.status, reply.json.tenant_id]).toEqual([201, tenantT]);
  return reply.json as { id: string; issuer: string; token_endpoint: string };
};

/** A browser's sign-in through the provider as `user`; the callback's answer and the browser (its cookies). */
const signIn = async (providerId: string, user: OidcUser) => {
  idp.signIn(user);
  const b = browser(() => stack.baseUrl);
  const start = await b.visit(`/api/v1/auth/sso/${providerId}?return_to=%2F`);
  expect(start.status).toBe(302);
  const atProvider = await b.visit(start.location!);
  expect(atProvider.status).toBe(302);
  return { b, callback: await b.visit(atProvider.location!) };
};

const userByEmail = async (email: string) =>
  (await call('GET', `/admin/users?search=${encodeURIComponent(email)}`, admin)).json.data as {
    id: string;
    tenant_id: string | null;
    roles: string[];
    identity_provider: { id: string } | null;
  }[];

const provider = async (id: string) => (await call('GET', `/admin/identity-providers/${id}`, admin)).json;

/** What a move made before links followed the tenant left behind: the tenant changed, the link kept. */
const moveWithoutUnlink = (userId: string, tenantId: string | null) =>
  db.send(
    new UpdateCommand({
      TableName: stack.tables['MainTable']!,
      Key: keys.user(userId),
      UpdateExpression: 'SET tenantId = :t ADD revision :one',
      ExpressionAttributeValues: { ':t': tenantId, ':one': 1 },
    }),
  );

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('ssodel')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: idp.host, OIDC_JWKS_COOLDOWN_SECONDS: '0' },
  });
  db = DynamoDBDocumentClient.from(dynamoClient(stack.dynamoEndpoint));
  admin = (await api.login(ADMIN)).token;
  tenantT = (await call('POST', '/tenants', admin, { name: 'Delegation T', slug: `del-t-${Date.now()}` })).json.id;
  tenantU = (await call('POST', '/tenants', admin, { name: 'Delegation U', slug: `del-u-${Date.now()}` })).json.id;
  await createUser('del-t-admin@example.com', 'del-t-password', ['admin'], tenantT);
  tenantAdmin = (await api.login({ email: 'del-t-admin@example.com', password: 'del-t-password' })).token;
});

afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
});

describe('single sign-on delegation', () => {
  it('sso: a link follows the user’s current tenant (a tenant’s provider does not sign in a user moved out of it)', async () => {
    // Prepare: two users provisioned through T's provider, then moved (to U, and to global) as before the rule
    const p = await tenantProvider();
    const moved: [string, string | null][] = [
      ['del-moved-u@corp.example', tenantU],
      ['del-moved-global@corp.example', null],
    ];
    for (const [email, tenant] of moved) {
      const first = await signIn(p.id, { sub: email, email, email_verified: true });
      expect(first.callback.status).toBe(303);
      const [user] = await userByEmail(email);
      expect([user!.tenant_id, user!.identity_provider?.id]).toEqual([tenantT, p.id]);
      await moveWithoutUnlink(user!.id, tenant);
      const before = (await call('GET', `/admin/users/${user!.id}`, admin)).json;
      // Act
      const { b, callback } = await signIn(p.id, { sub: email, email, email_verified: true });
      // Assess: refused, no session, the user as it was
      expect([email, callback.status, callback.json.error.code, callback.json.error.details.reason]).toEqual([
        email,
        403,
        'FORBIDDEN',
        'other_tenant',
      ]);
      expect(b.cookie('deployer_refresh')).toBeUndefined();
      expect((await call('GET', `/admin/users/${user!.id}`, admin)).json).toEqual(before);
    }
    // a global provider still signs in users of any tenant
    const global = await call('POST', '/admin/identity-providers', admin, {
      name: uniqueName('idp-global'),
      ...idp.endpoints(uniqueName('realm')),
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      jit_provisioning: true,
      jit_tenant_id: tenantU,
    });
    const email = 'del-global-idp@corp.example';
    expect((await signIn(global.json.id, { sub: email, email, email_verified: true })).callback.status).toBe(303);
  });

  it('sso: moving a linked user out of its provider’s tenant unlinks it (the mapped roles and the count go with it)', async () => {
    // Prepare: a user of T linked through T's provider, holding operator through a mapping and user by hand
    const p = await tenantProvider();
    const mapping = await call('POST', `/admin/identity-providers/${p.id}/role-mappings`, tenantAdmin, {
      claim_value: 'ops',
      role: 'operator',
    });
    expect([mapping.status, mapping.json.tenant_id]).toEqual([201, tenantT]);
    const email = 'del-mover@corp.example';
    const bob: OidcUser = { sub: 'del-mover', email, email_verified: true, groups: ['ops'] };
    expect((await signIn(p.id, bob)).callback.status).toBe(303);
    const [user] = await userByEmail(email);
    await call('PATCH', `/admin/users/${user!.id}`, tenantAdmin, { roles: ['operator', 'user'] });
    expect((await provider(p.id)).linked_users).toBe(1);
    // Act: the global admin moves the user to U
    const move = await call('PATCH', `/admin/users/${user!.id}`, admin, { tenant_id: tenantU });
    // Assess: moved and unlinked in the same write; the answer shows it
    expect(move.status).toBe(200);
    expect(move.json).toMatchObject({ tenant_id: tenantU, identity_provider: null, roles: ['user'] });
    expect(await call('GET', `/admin/users/${user!.id}`, admin).then((r) => r.json)).toMatchObject({
      tenant_id: tenantU,
      identity_provider: null,
      roles: ['user'],
    });
    expect((await provider(p.id)).linked_users).toBe(0);
    // the old link signs nobody in (the account is no longer linked to that subject), and the user is unchanged
    const before = (await call('GET', `/admin/users/${user!.id}`, admin)).json;
    const again = await signIn(p.id, bob);
    expect([again.callback.status, again.callback.json.error.details.reason]).toEqual([403, 'not_linked']);
    expect((await call('GET', `/admin/users/${user!.id}`, admin)).json).toEqual(before);
    // with nobody linked, T's admin may delete the provider
    expect((await call('DELETE', `/admin/identity-providers/${p.id}`, tenantAdmin)).status).toBe(204);
  });

  it('sso: a tenant provider’s mappings apply only to its tenant’s users (no tenant_id null, no other tenant)', async () => {
    // Prepare
    const p = await tenantProvider();
    const base = `/admin/identity-providers/${p.id}/role-mappings`;
    const own = await call('POST', base, tenantAdmin, { claim_value: 'devs', role: 'user' });
    expect(own.status).toBe(201);
    // Act: T's admin maps a group to admin for every tenant, or for U; or repoints its own mapping so
    for (const [method, path, body] of [
      ['POST', base, { claim_value: 'pwn', role: 'admin', tenant_id: null }],
      ['POST', base, { claim_value: 'pwn', role: 'admin', tenant_id: tenantU }],
      ['PUT', `${base}/${own.json.id}`, { role: 'admin', tenant_id: null }],
    ] as const) {
      const reply = await call(method, path, tenantAdmin, body);
      // Assess
      expect([method, reply.status, reply.json.error.code, reply.json.error.details.fields[0].field]).toEqual([
        method,
        400,
        'VALIDATION_ERROR',
        'tenant_id',
      ]);
    }
    // a global admin cannot put one there either
    const byGlobal = await call('POST', base, admin, { claim_value: 'pwn', role: 'admin', tenant_id: null });
    expect([byGlobal.status, byGlobal.json.error.details.fields[0].field]).toEqual([400, 'tenant_id']);
    expect((await call('GET', base, admin)).json).toEqual([own.json]);
    // a mapping stored before the rule (tenant null, to admin) grants nothing to a user of another tenant
    const email = 'del-other-tenant@corp.example';
    const carol: OidcUser = { sub: 'del-carol', email, email_verified: true, groups: [] };
    expect((await signIn(p.id, carol)).callback.status).toBe(303);
    const [user] = await userByEmail(email);
    await moveWithoutUnlink(user!.id, tenantU);
    const at = new Date().toISOString();
    await new DynamoIdentityProviderRepository(db, stack.tables['MainTable']!).putMapping({
      id: '00000000-0000-4000-8000-00000000a11c',
      shortId: 'legacy',
      providerId: p.id,
      claimValue: 'legacy-admins',
      role: 'admin',
      tenantId: null,
      createdAt: at,
      updatedAt: at,
    });
    const before = (await call('GET', `/admin/users/${user!.id}`, admin)).json;
    const { b, callback } = await signIn(p.id, { ...carol, groups: ['legacy-admins'] });
    expect([callback.status, callback.json.error.details.reason]).toEqual([403, 'other_tenant']);
    expect(b.cookie('deployer_refresh')).toBeUndefined();
    const after = (await call('GET', `/admin/users/${user!.id}`, admin)).json;
    expect(after).toEqual(before);
    expect(after.roles).not.toContain('admin');
  });

  it('sso: just-in-time provisioning needs a verified email unless a global admin trusts the provider for it', async () => {
    // Prepare
    const p = await tenantProvider();
    const email = 'del-ceo@corp.example';
    const eve: OidcUser = { sub: 'del-eve', email, email_verified: false };
    // Act: the provider asserts an address it did not verify
    const refused = await signIn(p.id, eve);
    // Assess: refused, nobody created
    expect([refused.callback.status, refused.callback.json.error.details.reason]).toEqual([403, 'unverified_email']);
    expect(refused.b.cookie('deployer_refresh')).toBeUndefined();
    expect(await userByEmail(email)).toEqual([]);
    // T's admin cannot trust its own provider's unverified emails (on create or update): 403, provider unchanged
    const before = await provider(p.id);
    const selfTrust = await call('PUT', `/admin/identity-providers/${p.id}`, tenantAdmin, {
      jit_trust_unverified_email: true,
    });
    expect([selfTrust.status, selfTrust.json.error.code, selfTrust.json.error.details.reason]).toEqual([
      403,
      'FORBIDDEN',
      'tenant_restriction',
    ]);
    expect(await provider(p.id)).toEqual(before);
    const created = await call('POST', '/admin/identity-providers', tenantAdmin, {
      name: uniqueName('idp-t'),
      ...idp.endpoints(uniqueName('realm')),
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      jit_provisioning: true,
      jit_trust_unverified_email: true,
    });
    expect([created.status, created.json.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(await signIn(p.id, eve).then((r) => r.callback.status)).toBe(403);
    expect(await userByEmail(email)).toEqual([]);
    // a global admin trusts it: the account is created, its email recorded as unverified
    const trusted = await call('PUT', `/admin/identity-providers/${p.id}`, admin, { jit_trust_unverified_email: true });
    expect([trusted.status, trusted.json.jit_trust_unverified_email]).toEqual([200, true]);
    const ok = await signIn(p.id, eve);
    expect(ok.callback.status).toBe(303);
    const [user] = await userByEmail(email);
    expect([user!.tenant_id, user!.identity_provider?.id]).toEqual([tenantT, p.id]);
    const refresh = await api.call('POST', '/api/v1/auth/refresh', {
      cookie: `deployer_refresh=${ok.b.cookie('deployer_refresh')}`,
    });
    const me = await call('GET', '/auth/me', refresh.json.access_token);
    expect([me.json.email, me.json.email_verified]).toEqual([email, false]);
    // T's admin repointing the provider drops the trust a global admin gave
    const repointed = await call('PUT', `/admin/identity-providers/${p.id}`, tenantAdmin, {
      jwks_uri: `${p.issuer}/jwks?v=2`,
    });
    expect([repointed.status, repointed.json.jit_trust_unverified_email]).toEqual([200, false]);
  });

  it('sso: a stored client secret is not sent to a changed token endpoint or issuer without it given again', async () => {
    // Prepare
    const p = await tenantProvider();
    const before = await provider(p.id);
    const elsewhere = idp.endpoints(uniqueName('attacker'));
    // Act: T's admin repoints where the secret goes, keeping the stored secret (omitted, or ***)
    for (const body of [
      { token_endpoint: `${idp.issuer}/collect/token` },
      { token_endpoint: `${idp.issuer}/collect/token`, client_secret: '***' },
      { issuer: elsewhere.issuer },
      { ...elsewhere },
    ]) {
      const reply = await call('PUT', `/admin/identity-providers/${p.id}`, tenantAdmin, body);
      // Assess: 400 naming client_secret, nothing stored
      expect([
        JSON.stringify(body),
        reply.status,
        reply.json.error.code,
        reply.json.error.details.fields[0].field,
      ]).toEqual([JSON.stringify(body), 400, 'VALIDATION_ERROR', 'client_secret']);
      expect(await provider(p.id)).toEqual(before);
    }
    // "test" still talks to the old token endpoint, which knows the client
    const requests = idp.tokenRequests();
    const test = await call('POST', `/admin/identity-providers/${p.id}/test`, tenantAdmin);
    const token = test.json.checks.find((c: { name: string }) => c.name === 'token_endpoint');
    expect([test.status, token.passed, idp.tokenRequests()]).toEqual([200, true, requests + 1]);
    // with the secret given again, the change is fine
    const moved = await call('PUT', `/admin/identity-providers/${p.id}`, tenantAdmin, {
      ...elsewhere,
      client_secret: CLIENT.clientSecret,
    });
    expect([moved.status, moved.json.token_endpoint, moved.json.issuer]).toEqual([
      200,
      elsewhere.token_endpoint,
      elsewhere.issuer,
    ]);
  });
});
