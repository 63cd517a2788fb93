// Single sign-on end to end over HTTP: a browser (cookie jar, redirects one hop at a time) signs in at the service
// through a real OpenID Connect provider running in this test on loopback, then gets an access token with the
// refresh cookie as any page would. Covers just-in-time provisioning, group -> role mappings (and their removal),
// key rotation, every way an ID token or a callback can be wrong, a disabled provider, a provider that creates no
// accounts, linking by email and its limits, and deleting a provider that users are linked to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { browser } from '../support/browser.js';
import { apiClient } from '../support/http.js';
import { startOidcProvider, type OidcProvider, type OidcUser } from '../../local/oidc-provider.js';
import { createUser } from '../support/users.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const CLIENT = { clientId: 'deployer-test', clientSecret: 'idp-client-secret-1234567890' };
let stack: Stack;
let idp: OidcProvider;
let admin: string;

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

const newProvider = async (overrides: Record<string, unknown> = {}) => {
  const reply = await call('POST', '/admin/identity-providers', admin, {
    name: uniqueName('idp'),
    ...idp.endpoints(uniqueName('realm')), // one realm per provider record (issuers are unique)
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
    scopes: ['openid', 'email', 'profile', 'groups'],
    jit_provisioning: true,
    ...overrides,
  });
  expect(reply.status).toBe(201);
  return reply.json as { id: string; name: string; authorization_endpoint: string };
};

/**
 * The browser's sign-in: the service redirects to the provider, the provider signs `user` in and redirects back, the
 * callback answers. Returns every hop and the browser (holding the cookies).
 */
const signIn = async (providerId: string, user: OidcUser, returnTo = '/deployments?view=mine') => {
  idp.signIn(user);
  const b = browser(() => stack.baseUrl);
  const start = await b.visit(`/api/v1/auth/sso/${providerId}?return_to=${encodeURIComponent(returnTo)}`);
  expect(start.status).toBe(302);
  const atProvider = await b.visit(start.location!);
  expect(atProvider.status).toBe(302);
  const callback = await b.visit(atProvider.location!);
  return { b, start, atProvider, callback };
};

/** The access token and the user the refresh cookie yields, as a page does after the callback. */
const session = async (b: ReturnType<typeof browser>) => {
  const refresh = await api.call('POST', '/api/v1/auth/refresh', {
    cookie: `deployer_refresh=${b.cookie('deployer_refresh')}`,
  });
  expect(refresh.status).toBe(200);
  const me = await call('GET', '/auth/me', refresh.json.access_token);
  expect(me.status).toBe(200);
  return { token: refresh.json.access_token as string, me: me.json };
};

beforeAll(async () => {
  idp = await startOidcProvider(CLIENT);
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('ssoin')}-`,
    bootstrapAdmin: ADMIN,
    env: { OIDC_ALLOWED_HOSTS: idp.host, OIDC_JWKS_COOLDOWN_SECONDS: '0' },
  });
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await stack?.stop();
  await idp?.stop();
});

describe('single sign-on', () => {
  it('signs a new user in end to end: PKCE, state, nonce, a provisioned account, the groups’ roles, a session', async () => {
    // Prepare
    const provider = await newProvider();
    await call('POST', `/admin/identity-providers/${provider.id}/role-mappings`, admin, {
      claim_value: 'deployers',
      role: 'operator',
    });
    const alice: OidcUser = {
      sub: 'alice-sub',
      email: 'alice@corp.example',
      email_verified: true,
      name: 'Alice',
      groups: ['deployers', 'other'],
    };
    // Act
    const { b, start, callback } = await signIn(provider.id, alice);
    // Assess: the request to the provider
    const authorize = new URL(start.location!);
    expect(authorize.origin + authorize.pathname).toBe(provider.authorization_endpoint);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: CLIENT.clientId,
      redirect_uri: `${stack.env['PUBLIC_BASE_URL']}/api/v1/auth/sso/${provider.id}/callback`,
      scope: 'openid email profile groups',
      code_challenge_method: 'S256',
    });
    for (const name of ['state', 'nonce', 'code_challenge'])
      expect(authorize.searchParams.get(name)).toMatch(/^[\w-]{43,}$/);
    const attributes = (cookie: string | undefined) => new Set((cookie ?? '').split(';').map((a) => a.trim()));
    const binding = attributes(start.setCookies.find((c) => c.startsWith('deployer_sso=')));
    for (const attribute of ['Path=/api/v1/auth/sso', 'HttpOnly', 'SameSite=Lax']) expect(binding).toContain(attribute);
    // the callback: signed in, back to return_to, the refresh cookie set, the binding cookie cleared
    expect([callback.status, callback.location]).toEqual([303, '/deployments?view=mine']);
    const refresh = attributes(callback.setCookies.find((c) => c.startsWith('deployer_refresh=')));
    for (const attribute of ['Path=/api/v1/auth', 'HttpOnly', 'SameSite=Strict']) expect(refresh).toContain(attribute);
    expect(attributes(callback.setCookies.find((c) => c.startsWith('deployer_sso=;')))).toContain('Max-Age=0');
    const { me } = await session(b);
    expect(me).toMatchObject({
      email: 'alice@corp.example',
      display_name: 'Alice',
      roles: ['operator'],
      email_verified: true,
    });
    expect(me.permissions).toContain('deployments:create');
    // the admin user record shows the link; the account has no password to log in with
    const users = await call('GET', '/admin/users?search=alice%40corp', admin);
    expect(users.json.data[0].identity_provider).toEqual({
      id: provider.id,
      name: provider.name,
      subject: 'alice-sub',
    });
    const password = await call('POST', '/auth/login', undefined, {
      email: 'alice@corp.example',
      password: 'anything-at-all',
    });
    expect([password.status, password.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });

  it('applies the mappings on every sign-in: a role only a mapping gave goes with the group, a role set by hand stays', async () => {
    // Prepare
    const provider = await newProvider();
    await call('POST', `/admin/identity-providers/${provider.id}/role-mappings`, admin, {
      claim_value: 'ops',
      role: 'operator',
    });
    const bob: OidcUser = { sub: 'bob-sub', email: 'bob@corp.example', email_verified: true, groups: ['ops'] };
    const first = await session((await signIn(provider.id, bob)).b);
    expect(first.me.roles).toEqual(['operator']);
    const user = (await call('GET', '/admin/users?search=bob%40corp', admin)).json.data[0];
    await call('PATCH', `/admin/users/${user.id}`, admin, { roles: ['operator', 'user'] });
    // Act: bob left the group
    const second = await session((await signIn(provider.id, { ...bob, groups: [] })).b);
    // Assess
    expect(second.me.roles).toEqual(['user']);
    expect(second.me.permissions).not.toContain('deployments:cancel');
    // and back in the group: the role comes back, the hand-set one stays
    const third = await session((await signIn(provider.id, bob)).b);
    expect([...third.me.roles].sort()).toEqual(['operator', 'user']);
  });

  it('follows a role rename into the mappings and the users, and drops the mappings of a deleted role', async () => {
    // Prepare: a custom role granted through a mapping
    const role = await call('POST', '/admin/roles', admin, { name: 'releasers' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, admin, { permissions: ['deployments:read'] });
    const provider = await newProvider();
    const base = `/admin/identity-providers/${provider.id}/role-mappings`;
    await call('POST', base, admin, { claim_value: 'rel', role: 'releasers' });
    const ivan: OidcUser = { sub: 'ivan-sub', email: 'ivan@corp.example', email_verified: true, groups: ['rel'] };
    expect((await session((await signIn(provider.id, ivan)).b)).me.roles).toEqual(['releasers']);
    // Act: rename
    await call('PUT', `/admin/roles/${role.json.id}`, admin, { name: 'shippers' });
    // Assess: the mapping names the new name; the role is still mapping-managed (goes with the group)
    expect((await call('GET', base, admin)).json.map((m: { role: string }) => m.role)).toEqual(['shippers']);
    expect((await session((await signIn(provider.id, { ...ivan, groups: [] })).b)).me.roles).toEqual([]);
    expect((await session((await signIn(provider.id, ivan)).b)).me.roles).toEqual(['shippers']);
    // Act: delete; a new role of the old name is not granted by the old mapping
    expect((await call('DELETE', `/admin/roles/${role.json.id}`, admin)).status).toBe(204);
    await call('POST', '/admin/roles', admin, { name: 'shippers' });
    // Assess
    expect((await call('GET', base, admin)).json).toEqual([]);
    expect((await session((await signIn(provider.id, ivan)).b)).me.roles).toEqual([]);
  });

  it('asks a user with two-factor for a code after the provider, unless the provider is trusted for it', async () => {
    // Prepare: a provisioned user turns on two-factor
    const { generate } = await import('otplib');
    const codeAt = (secret: string, step: number) => generate({ secret, epoch: step * 30 + 1 });
    const provider = await newProvider();
    const judy: OidcUser = { sub: 'judy-sub', email: 'judy@corp.example', email_verified: true };
    const { token } = await session((await signIn(provider.id, judy)).b);
    const secret = (await call('POST', '/auth/2fa/setup', token)).json.secret as string;
    const enabledStep = Math.floor(Date.now() / 30_000);
    const enabled = await call('POST', '/auth/2fa/enable', token, { code: await codeAt(secret, enabledStep) });
    expect(enabled.json.two_factor_enabled).toBe(true);
    // Act: the provider is not trusted for 2FA (the default)
    const { b, callback } = await signIn(provider.id, judy, '/home');
    // Assess: back to return_to with a pending token in the fragment, no session yet
    expect(callback.status).toBe(303);
    const [path, fragment] = callback.location!.split('#');
    expect(path).toBe('/home');
    const params = new URLSearchParams(fragment);
    expect(params.get('requires_2fa')).toBe('true');
    expect(b.cookie('deployer_refresh')).toBeUndefined();
    const verified = await call('POST', '/auth/2fa/verify', undefined, {
      code: await codeAt(secret, enabledStep + 1),
      pending_token: params.get('pending_token'),
    });
    expect([verified.status, verified.json.user?.email]).toEqual([200, 'judy@corp.example']);
    // a provider trusted for 2FA signs the user in at once
    await call('PUT', `/admin/identity-providers/${provider.id}`, admin, { trusted_for_2fa: true });
    const trusted = await signIn(provider.id, judy, '/home');
    expect([trusted.callback.status, trusted.callback.location]).toEqual([303, '/home']);
    expect((await session(trusted.b)).me.email).toBe('judy@corp.example');
  });

  it('picks up a rotated signing key from the JWKS', async () => {
    const provider = await newProvider();
    const carol: OidcUser = { sub: 'carol-sub', email: 'carol@corp.example', email_verified: true };
    expect((await signIn(provider.id, carol)).callback.status).toBe(303);
    const before = idp.currentKid();
    // Act
    const after = await idp.rotate();
    const { callback } = await signIn(provider.id, carol);
    // Assess
    expect(after).not.toBe(before);
    expect(callback.status).toBe(303);
  });

  it('refuses ID tokens that do not verify: a foreign signature, another nonce, another audience, an expired one', async () => {
    const provider = await newProvider();
    const dave: OidcUser = { sub: 'dave-sub', email: 'dave@corp.example', email_verified: true };
    for (const knobs of [
      { badSignature: true },
      { nonce: 'not-the-nonce' },
      { audience: 'another-client' },
      { expired: true },
    ]) {
      idp.setKnobs(knobs);
      const { b, callback } = await signIn(provider.id, dave);
      expect([JSON.stringify(knobs), callback.status, callback.json.error.code]).toEqual([
        JSON.stringify(knobs),
        401,
        'INVALID_TOKEN',
      ]);
      expect(b.cookie('deployer_refresh')).toBeUndefined();
    }
    idp.setKnobs({});
    // nobody was created by the refused sign-ins
    expect((await call('GET', '/admin/users?search=dave%40corp', admin)).json.data).toEqual([]);
    // a refusal by the provider
    idp.setKnobs({ deny: true });
    const denied = await signIn(provider.id, dave);
    idp.setKnobs({});
    expect([denied.callback.status, denied.callback.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });

  it('accepts a callback once, only in the browser that started it, and only to a path on this site', async () => {
    const provider = await newProvider();
    const erin: OidcUser = { sub: 'erin-sub', email: 'erin@corp.example', email_verified: true };
    const { b, atProvider, callback } = await signIn(provider.id, erin);
    expect(callback.status).toBe(303);
    // replayed: the state was consumed
    const replay = await b.visit(atProvider.location!);
    expect([replay.status, replay.json.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // another browser (no binding cookie) with a fresh, valid state and code
    idp.signIn(erin);
    const victim = browser(() => stack.baseUrl);
    const start = await victim.visit(`/api/v1/auth/sso/${provider.id}`);
    const back = await victim.visit(start.location!);
    const attacker = browser(() => stack.baseUrl);
    const stolen = await attacker.visit(back.location!);
    expect([stolen.status, stolen.json.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // return_to must stay on this site
    for (const target of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const reply = await victim.visit(`/api/v1/auth/sso/${provider.id}?return_to=${encodeURIComponent(target)}`);
      expect([target, reply.status, reply.json.error.code]).toEqual([target, 400, 'VALIDATION_ERROR']);
    }
    // no state, unknown provider
    expect((await victim.visit(`/api/v1/auth/sso/${provider.id}/callback?code=x`)).status).toBe(400);
    expect((await victim.visit('/api/v1/auth/sso/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('refuses sign-in through a disabled provider, and unknown users when the provider creates no accounts', async () => {
    const provider = await newProvider({ jit_provisioning: false });
    const frank: OidcUser = { sub: 'frank-sub', email: 'frank@corp.example', email_verified: true };
    // JIT off: nobody is created
    const unknown = await signIn(provider.id, frank);
    expect([unknown.callback.status, unknown.callback.json.error.details.reason]).toEqual([403, 'not_provisioned']);
    expect((await call('GET', '/admin/users?search=frank%40corp', admin)).json.data).toEqual([]);
    // disabled: refused at the start, and a sign-in already at the provider is refused at the callback
    const b = browser(() => stack.baseUrl);
    const start = await b.visit(`/api/v1/auth/sso/${provider.id}`);
    const back = await b.visit(start.location!);
    await call('PUT', `/admin/identity-providers/${provider.id}`, admin, { enabled: false });
    const late = await b.visit(back.location!);
    expect([late.status, late.json.error.details.reason]).toEqual([403, 'provider_disabled']);
    const refused = await browser(() => stack.baseUrl).visit(`/api/v1/auth/sso/${provider.id}`);
    expect([refused.status, refused.json.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('links an existing account by verified email only when configured, and never one beyond the provider’s trust', async () => {
    // Prepare: a password user, and the bootstrap admin
    await createUser('grace@corp.example', 'grace-password', ['user']);
    const plain = await newProvider({ jit_provisioning: true });
    const linking = await newProvider({ link_by_email: true });
    const grace: OidcUser = { sub: 'grace-sub', email: 'grace@corp.example', email_verified: true };
    // not configured to link: refused (and no second account)
    const refused = await signIn(plain.id, grace);
    expect([refused.callback.status, refused.callback.json.error.details.reason]).toEqual([403, 'not_linked']);
    // unverified email: refused
    const unverified = await signIn(linking.id, { ...grace, email_verified: false });
    expect(unverified.callback.status).toBe(403);
    // verified: linked, and the password still works for an account that has one
    const linked = await signIn(linking.id, grace);
    expect(linked.callback.status).toBe(303);
    expect((await session(linked.b)).me.email).toBe('grace@corp.example');
    expect(
      (
        await api.call('POST', '/api/v1/auth/login', {
          body: { email: 'grace@corp.example', password: 'grace-password' },
        })
      ).status,
    ).toBe(200);
    // Attack: a provider set up by a weaker manager cannot take over the admin account by asserting its email
    const role = await call('POST', '/admin/roles', admin, { name: 'idp-linker' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, admin, {
      permissions: ['identity_providers:read', 'identity_providers:create', 'identity_providers:update'],
    });
    await createUser('linker@corp.example', 'linker-password', ['idp-linker']);
    const linker = (await api.login({ email: 'linker@corp.example', password: 'linker-password' })).token;
    const rogue = await call('POST', '/admin/identity-providers', linker, {
      name: 'rogue',
      ...idp.endpoints('rogue'),
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      link_by_email: true,
    });
    expect(rogue.status).toBe(201);
    const takeover = await signIn(rogue.json.id, { sub: 'evil', email: ADMIN.email, email_verified: true });
    expect([takeover.callback.status, takeover.callback.json.error.details.reason]).toEqual([403, 'not_linkable']);
    expect(takeover.b.cookie('deployer_refresh')).toBeUndefined();
  });

  it('does not delete a provider while users are linked to it', async () => {
    const provider = await newProvider();
    expect(
      (await signIn(provider.id, { sub: 'heidi-sub', email: 'heidi@corp.example', email_verified: true })).callback
        .status,
    ).toBe(303);
    // Act
    const refused = await call('DELETE', `/admin/identity-providers/${provider.id}`, admin);
    // Assess
    expect([refused.status, refused.json.error.code, refused.json.error.details.linked_users]).toEqual([
      409,
      'CONFLICT',
      1,
    ]);
    expect((await call('GET', `/admin/identity-providers/${provider.id}`, admin)).json.linked_users).toBe(1);
    // once the user is gone, the provider can go
    const heidi = (await call('GET', '/admin/users?search=heidi%40corp', admin)).json.data[0];
    expect((await call('DELETE', `/admin/users/${heidi.id}`, admin)).status).toBe(204);
    expect((await call('DELETE', `/admin/identity-providers/${provider.id}`, admin)).status).toBe(204);
  });

  it('never lets a manager of identity providers map a group to a role stronger than their own and sign in as it', async () => {
    // Prepare: a manager with every identity_providers permission and deployments:read, not an admin
    const role = await call('POST', '/admin/roles', admin, { name: 'idp-manager' });
    await call('POST', `/admin/roles/${role.json.id}/permissions`, admin, {
      permissions: [
        'identity_providers:read',
        'identity_providers:create',
        'identity_providers:update',
        'identity_providers:delete',
        'deployments:read',
      ],
    });
    await createUser('idpm@corp.example', 'idpm-password', ['idp-manager']);
    const manager = (await api.login({ email: 'idpm@corp.example', password: 'idpm-password' })).token;
    const own = await call('POST', '/admin/identity-providers', manager, {
      name: 'manager-idp',
      ...idp.endpoints('manager'),
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      jit_provisioning: true,
    });
    expect(own.status).toBe(201);
    // Act: map a group to admin (and to operator, also beyond the manager)
    for (const target of ['admin', 'operator']) {
      const reply = await call('POST', `/admin/identity-providers/${own.json.id}/role-mappings`, manager, {
        claim_value: 'pwned',
        role: target,
      });
      expect([target, reply.status, reply.json.error.code]).toEqual([target, 403, 'INSUFFICIENT_PERMISSIONS']);
    }
    // an admin's mapping to admin on another provider is not the manager's to repoint, nor its provider to change
    const adminIdp = await newProvider();
    const adminMapping = await call('POST', `/admin/identity-providers/${adminIdp.id}/role-mappings`, admin, {
      claim_value: 'real-admins',
      role: 'admin',
    });
    const repoint = await call(
      'PUT',
      `/admin/identity-providers/${adminIdp.id}/role-mappings/${adminMapping.json.id}`,
      manager,
      { claim_value: 'pwned' },
    );
    expect([repoint.status, repoint.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    const retarget = await call('PUT', `/admin/identity-providers/${adminIdp.id}`, manager, {
      jwks_uri: `${idp.issuer}/evil-jwks`,
    });
    expect([retarget.status, retarget.json.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    // a mapping within the manager's own permissions is fine
    const mine = await call('POST', `/admin/identity-providers/${own.json.id}/role-mappings`, manager, {
      claim_value: 'pwned',
      role: 'idp-manager',
    });
    expect(mine.status).toBe(201);
    // Assess: signing in with the group gives what the manager could give, never admin
    const { b, callback } = await signIn(own.json.id, {
      sub: 'mallory',
      email: 'mallory@corp.example',
      email_verified: true,
      groups: ['pwned', 'real-admins'],
    });
    expect(callback.status).toBe(303);
    const { me, token } = await session(b);
    expect(me.roles).toEqual(['idp-manager']);
    expect(me.permissions).not.toContain('users:create');
    expect((await call('GET', '/admin/users', token)).status).toBe(403);
  });
  it('lists the enabled providers of every tenant for anyone, with their names and sign-in links only', async () => {
    // Prepare: a disabled global provider, an enabled global one, and an enabled one of a tenant
    const disabled = await newProvider({ enabled: false });
    const global = await newProvider();
    const tenant = await call('POST', '/tenants', admin, { name: 'SSO list', slug: `sso-list-${Date.now()}` });
    await createUser('sso-list-admin@example.com', 'list-password', ['admin'], tenant.json.id);
    const tenantAdmin = (await api.login({ email: 'sso-list-admin@example.com', password: 'list-password' })).token;
    const ofTenant = await call('POST', '/admin/identity-providers', tenantAdmin, {
      name: uniqueName('tenant-idp'),
      ...idp.endpoints(uniqueName('realm')),
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
    });
    expect(ofTenant.status).toBe(201);
    const list = async () => {
      const reply = await call('GET', '/auth/sso', undefined); // no credential
      expect(reply.status).toBe(200);
      return reply.json.data as Record<string, unknown>[];
    };
    const ids = async () => (await list()).map((p) => p['id']);
    // Act: the list is kept up to 5 s per container, so wait for a read made after the providers exist
    await expect.poll(ids, { timeout: 15_000 }).toEqual(expect.arrayContaining([global.id, ofTenant.json.id]));
    const data = await list();
    // Assess: the disabled one is not offered; each entry is its id, short id, name and link, nothing else
    expect(data.map((p) => p['id'])).not.toContain(disabled.id);
    for (const entry of data) expect(Object.keys(entry).sort()).toEqual(['id', 'name', 'short_id', 'sign_in_url']);
    const entry = data.find((p) => p['id'] === global.id)!;
    expect(entry).toEqual({
      id: global.id,
      short_id: expect.stringMatching(/^\w+$/),
      name: global.name,
      sign_in_url: `${stack.env['PUBLIC_BASE_URL']}/api/v1/auth/sso/${global.id}`,
    });
    expect(JSON.stringify(data)).not.toContain(CLIENT.clientId);
    expect(JSON.stringify(data)).not.toContain('/realms/'); // the issuers
    // the link starts the sign-in
    const start = await browser(() => stack.baseUrl).visit(`/api/v1/auth/sso/${global.id}?return_to=%2F`);
    expect(start.status).toBe(302);
    // disabling a provider takes it off the list (within the cache's 5 s)
    expect((await call('PUT', `/admin/identity-providers/${global.id}`, admin, { enabled: false })).status).toBe(200);
    await expect.poll(ids, { timeout: 15_000 }).not.toContain(global.id);
  });
});
