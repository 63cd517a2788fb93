// Admin use cases of identity providers with in-memory fakes: the secret, tenancy, and the rules that keep a provider
// from becoming a way to roles or accounts the caller does not hold.
import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { ForbiddenError, InsufficientPermissionsError } from '../../../../domain/identity/errors.js';
import { PERMISSIONS, systemRole, type Permission } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { testProvider } from '../../../../domain/sso/provider-checks.js';
import {
  createProvider,
  deleteProvider,
  getProvider,
  listProviders,
  listSignInProviders,
  updateProvider,
} from '../../../../domain/sso/providers.js';
import { createMapping, updateMapping } from '../../../../domain/sso/role-mappings.js';
import { ProviderRequestError } from '../../../../domain/sso/ports.js';
import { aUser } from '../../../fakes/identity.js';
import { ssoFakes } from '../../../fakes/sso.js';

const callerWith = (permissions: readonly string[], tenantId: string | null = null): Caller => ({
  kind: 'user',
  userId: 'caller',
  tenantId,
  roles: [],
  permissions: new Set(permissions as Permission[]),
});
const everything = callerWith(PERMISSIONS.map((p) => p.name));
const idpManager = callerWith(['identity_providers:read', 'identity_providers:create', 'identity_providers:update']);

const settings = {
  name: 'Corp',
  issuer: 'https://idp.corp.example/',
  client_id: 'deployer',
  client_secret: 's3cret-value',
  authorization_endpoint: 'https://idp.corp.example/authorize',
  token_endpoint: 'https://idp.corp.example/token',
  jwks_uri: 'https://idp.corp.example/jwks',
};

describe('identity providers (admin)', () => {
  it('stores the secret encrypted, answers it as ***, and normalizes the issuer', async () => {
    // Prepare
    const { admin, providers, cipher } = ssoFakes();
    // Act
    const view = await createProvider(admin, everything, settings);
    // Assess
    expect(view).toMatchObject({
      client_secret: '***',
      issuer: 'https://idp.corp.example',
      scopes: ['openid', 'email', 'profile'],
    });
    const stored = providers.providers.get(view.id)!;
    expect(stored.clientSecret).not.toContain('s3cret');
    expect(cipher.decrypt(stored.clientSecret, `idp:${view.id}`)).toBe('s3cret-value');
    expect(() => cipher.decrypt(stored.clientSecret, 'idp:another')).toThrow();
    // *** on update keeps it; a new one replaces it
    await updateProvider(admin, everything, view.id, { client_secret: '***' });
    expect(cipher.decrypt(providers.providers.get(view.id)!.clientSecret, `idp:${view.id}`)).toBe('s3cret-value');
    await updateProvider(admin, everything, view.id, { client_secret: 'next' });
    expect(cipher.decrypt(providers.providers.get(view.id)!.clientSecret, `idp:${view.id}`)).toBe('next');
  });

  it('refuses URLs the endpoint policy refuses and scopes without openid', async () => {
    const { admin } = ssoFakes();
    await expect(
      createProvider(admin, everything, { ...settings, jwks_uri: 'http://idp/jwks' }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(createProvider(admin, everything, { ...settings, scopes: ['email'] })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it('refuses a provider whose discovery document cannot be read, saying why, and stores nothing', async () => {
    // Prepare
    const { admin, oidc, providers } = ssoFakes();
    oidc.discovered = new ProviderRequestError('The host name does not resolve.');
    // Act
    const refused = await createProvider(admin, everything, settings).catch((e: unknown) => e);
    // Assess
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).fields).toEqual([
      {
        field: 'issuer',
        code: 'VALIDATION_ERROR',
        message:
          'Could not read https://idp.corp.example/.well-known/openid-configuration: the host name does not resolve.',
      },
    ]);
    expect(oidc.discoveries).toEqual(['https://idp.corp.example']);
    expect(providers.providers.size).toBe(0);
  });

  it('reads the discovery document again only when an update changes the issuer', async () => {
    // Prepare
    const { admin, oidc, providers } = ssoFakes();
    const view = await createProvider(admin, everything, settings);
    const before = providers.providers.get(view.id);
    oidc.discovered = new ProviderRequestError('The provider did not answer in time.');
    // Act: a rename does not ask the provider; a new issuer does, and is refused
    await updateProvider(admin, everything, view.id, { name: 'Renamed' });
    const moved = await updateProvider(admin, everything, view.id, {
      issuer: 'https://other.corp.example',
      client_secret: 'again',
    }).catch((e: unknown) => e);
    // Assess
    expect(oidc.discoveries).toEqual(['https://idp.corp.example', 'https://other.corp.example']);
    expect([moved instanceof ValidationError, (moved as ValidationError).fields[0]?.field]).toEqual([true, 'issuer']);
    expect(providers.providers.get(view.id)).toMatchObject({ ...before, name: 'Renamed', revision: 2 });
  });

  it('keeps a tenant’s providers to it', async () => {
    const { admin } = ssoFakes();
    const a = callerWith(['identity_providers:read', 'identity_providers:create'], 'tenant-a');
    const b = callerWith(['identity_providers:read', 'identity_providers:create'], 'tenant-b');
    const ofA = await createProvider(admin, a, settings);
    expect([ofA.tenant_id, ofA.jit_tenant_id]).toEqual(['tenant-a', 'tenant-a']);
    await expect(getProvider(admin, b, ofA.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await listProviders(admin, b, { page: 1, limit: 50 })).data).toEqual([]);
    expect((await listProviders(admin, everything, { page: 1, limit: 50 })).data.map((p) => p.id)).toEqual([ofA.id]);
  });

  it('grants through a mapping only roles within the caller’s permissions, and lets nobody repoint a stronger one', async () => {
    // Prepare
    const { admin } = ssoFakes();
    const provider = await createProvider(admin, idpManager, settings);
    // Act + Assess
    await expect(
      createMapping(admin, idpManager, provider.id, { claim_value: 'g', role: 'admin' }),
    ).rejects.toBeInstanceOf(InsufficientPermissionsError);
    await expect(
      createMapping(admin, idpManager, provider.id, { claim_value: 'g', role: 'nope' }),
    ).rejects.toBeInstanceOf(ValidationError);
    const strong = await createMapping(admin, everything, provider.id, { claim_value: 'admins', role: 'admin' });
    await expect(
      updateMapping(admin, idpManager, provider.id, strong.id, { claim_value: 'everyone' }),
    ).rejects.toBeInstanceOf(InsufficientPermissionsError);
    // the provider itself now opens admin: the manager cannot change it
    await expect(
      updateProvider(admin, idpManager, provider.id, { jwks_uri: 'https://evil.example/jwks' }),
    ).rejects.toBeInstanceOf(InsufficientPermissionsError);
  });

  it('lets nobody change a provider linked to an account stronger than they are; 409 on delete while linked', async () => {
    // Prepare
    const { admin, users, providers } = ssoFakes();
    const provider = await createProvider(admin, everything, settings);
    await users.create(
      aUser({ roles: ['admin'], identityLink: { providerId: provider.id, providerName: 'Corp', subject: 's' } }),
    );
    expect(providers.providers.get(provider.id)!.linkedUsers).toBe(1);
    // Act + Assess
    const error = await updateProvider(admin, idpManager, provider.id, { name: 'Mine' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientPermissionsError);
    expect((error as InsufficientPermissionsError).details?.['missing']).toContain('users:create');
    await expect(deleteProvider(admin, everything, provider.id)).rejects.toBeInstanceOf(ConflictError);
    expect(systemRole('admin')!.permissions).toContain('users:create');
  });

  it('sends the stored secret to no new destination: a new token endpoint or issuer needs the secret again', async () => {
    // Prepare
    const { admin, providers } = ssoFakes();
    const provider = await createProvider(admin, everything, settings);
    const before = providers.providers.get(provider.id);
    // Act + Assess: without the secret (or with ***), refused on client_secret and nothing stored
    for (const change of [
      { token_endpoint: 'https://evil.example/token' },
      { token_endpoint: 'https://evil.example/token', client_secret: '***' },
      { issuer: 'https://evil.example' },
    ]) {
      const error = await updateProvider(admin, everything, provider.id, change).catch((e: unknown) => e);
      expect([JSON.stringify(change), error instanceof ValidationError]).toEqual([JSON.stringify(change), true]);
      expect((error as ValidationError).details?.['fields']).toEqual([
        expect.objectContaining({ field: 'client_secret' }),
      ]);
      expect(providers.providers.get(provider.id)).toEqual(before);
    }
    // the same values, or other fields, need no secret; a new destination with its secret is fine
    await updateProvider(admin, everything, provider.id, { token_endpoint: settings.token_endpoint, name: 'Corp 2' });
    await updateProvider(admin, everything, provider.id, { jwks_uri: 'https://idp.corp.example/keys' });
    const moved = await updateProvider(admin, everything, provider.id, {
      token_endpoint: 'https://idp2.corp.example/token',
      client_secret: 'the-new-secret',
    });
    expect(moved.token_endpoint).toBe('https://idp2.corp.example/token');
  });

  it('keeps a tenant provider’s mappings to its tenant: null or another tenant is refused on tenant_id', async () => {
    // Prepare
    const { admin, tenants } = ssoFakes();
    for (const id of ['tenant-a', 'tenant-b'])
      tenants.tenants.set(id, { id, shortId: id, name: id, slug: id } as never);
    const a = { ...everything, tenantId: 'tenant-a' };
    const provider = await createProvider(admin, a, settings);
    // Act + Assess
    for (const caller of [a, everything])
      for (const tenant_id of [null, 'tenant-b', 'no-such-tenant']) {
        const error = await createMapping(admin, caller, provider.id, {
          claim_value: 'g',
          role: 'user',
          tenant_id,
        }).catch((e: unknown) => e);
        expect([tenant_id, error instanceof ValidationError]).toEqual([tenant_id, true]);
        expect((error as ValidationError).details?.['fields']).toEqual([
          expect.objectContaining({ field: 'tenant_id' }),
        ]);
      }
    const omitted = await createMapping(admin, a, provider.id, { claim_value: 'g', role: 'user' });
    const own = await createMapping(admin, a, provider.id, { claim_value: 'h', role: 'user', tenant_id: 'tenant-a' });
    expect([omitted.tenant_id, own.tenant_id]).toEqual(['tenant-a', 'tenant-a']);
    await expect(updateMapping(admin, a, provider.id, own.id, { tenant_id: null })).rejects.toBeInstanceOf(
      ValidationError,
    );
    // a global provider's mapping may still apply to every tenant
    const global = await createProvider(admin, everything, { ...settings, issuer: 'https://other.example' });
    expect((await createMapping(admin, everything, global.id, { claim_value: 'g', role: 'user' })).tenant_id).toBe(
      null,
    );
  });

  it('lets only a global caller trust unverified emails, and a tenant caller who re-points the provider loses it', async () => {
    // Prepare
    const { admin, providers } = ssoFakes();
    const a = callerWith(
      ['identity_providers:read', 'identity_providers:create', 'identity_providers:update'],
      'tenant-a',
    );
    // Act + Assess: a tenant caller cannot turn it on
    await expect(createProvider(admin, a, { ...settings, jit_trust_unverified_email: true })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    const provider = await createProvider(admin, a, settings);
    expect(provider.jit_trust_unverified_email).toBe(false);
    await expect(updateProvider(admin, a, provider.id, { jit_trust_unverified_email: true })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    expect(providers.providers.get(provider.id)!.jitTrustUnverifiedEmail).toBe(false);
    // a global caller can; the tenant caller may repeat it, but changing who the provider is turns it off
    expect(
      (await updateProvider(admin, everything, provider.id, { jit_trust_unverified_email: true }))
        .jit_trust_unverified_email,
    ).toBe(true);
    expect(
      (await updateProvider(admin, a, provider.id, { jit_trust_unverified_email: true, name: 'Still' }))
        .jit_trust_unverified_email,
    ).toBe(true);
    const repointed = await updateProvider(admin, a, provider.id, { jwks_uri: 'https://evil.example/jwks' });
    expect(repointed.jit_trust_unverified_email).toBe(false);
    expect(providers.providers.get(provider.id)!.jitTrustUnverifiedEmail).toBe(false);
  });

  it('sets the trust ceiling to the permissions of whoever last set the provider up', async () => {
    const { admin, providers } = ssoFakes();
    const provider = await createProvider(admin, everything, settings);
    expect(providers.providers.get(provider.id)!.trustCeiling).toHaveLength(57);
    await updateProvider(admin, idpManager, provider.id, { link_by_email: true });
    expect(providers.providers.get(provider.id)!.trustCeiling).toEqual([...idpManager.permissions].sort());
  });

  it.each([
    [{ status: 400, error: 'invalid_grant' }, true],
    [{ status: 400, error: 'invalid_request' }, true],
    [{ status: 401, error: 'invalid_client' }, false],
    [{ status: 400, error: 'unauthorized_client' }, false],
    [{ status: 500, error: null }, false],
    [{ status: 200, error: null }, false],
  ])('tests the token endpoint: %j passes: %s', async (probe, passes) => {
    const { admin, oidc } = ssoFakes();
    const provider = await createProvider(admin, everything, settings);
    oidc.discovered = {
      issuer: 'https://idp.corp.example',
      authorization_endpoint: '',
      token_endpoint: '',
      userinfo_endpoint: null,
      jwks_uri: '',
      scopes_supported: [],
      claims_supported: [],
      id_token_signing_alg_values_supported: [],
      token_endpoint_auth_methods_supported: [],
      code_challenge_methods_supported: [],
    };
    oidc.probe = probe;
    // Act
    const result = await testProvider(admin, everything, provider.id);
    // Assess
    expect(result.checks.map((c) => c.passed)).toEqual([true, true, passes]);
    expect(result.success).toBe(passes);
  });
});

describe('the public list of sign-in providers', () => {
  it('lists the enabled providers of every tenant, with their id, short id, name and sign-in link only', async () => {
    // Prepare: a global provider, a tenant's, and a disabled one
    const { admin } = ssoFakes();
    const global = await createProvider(admin, everything, settings);
    const ofTenant = await createProvider(
      admin,
      callerWith(
        PERMISSIONS.map((p) => p.name),
        'tenant-a',
      ),
      {
        ...settings,
        name: 'Tenant IdP',
      },
    );
    await createProvider(admin, everything, {
      ...settings,
      name: 'Off',
      issuer: 'https://off.example',
      enabled: false,
    });
    // Act
    const list = await listSignInProviders(admin);
    // Assess
    expect(list).toEqual([
      {
        id: global.id,
        short_id: global.short_id,
        name: 'Corp',
        sign_in_url: `${admin.publicBaseUrl}/api/v1/auth/sso/${global.id}`,
      },
      {
        id: ofTenant.id,
        short_id: ofTenant.short_id,
        name: 'Tenant IdP',
        sign_in_url: `${admin.publicBaseUrl}/api/v1/auth/sso/${ofTenant.id}`,
      },
    ]);
  });
});
