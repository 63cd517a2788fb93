// The single sign-on flow with in-memory fakes: the pure decisions as tables (roles after a sign-in, return_to), and
// completeSsoSignIn's refusals, linking and provisioning, then ssoSession's two-factor choice.
import { describe, expect, it } from 'vitest';
import { ExternalServiceError, ValidationError } from '../../../../domain/errors.js';
import { ForbiddenError, InvalidCredentialsError, InvalidTokenError } from '../../../../domain/identity/errors.js';
import { PERMISSIONS, type Permission } from '../../../../domain/identity/permissions.js';
import { createProvider, updateProvider } from '../../../../domain/sso/providers.js';
import { createMapping } from '../../../../domain/sso/role-mappings.js';
import {
  completeSsoSignIn,
  decideRoles,
  pkceChallenge,
  rolesGranted,
  safeReturnTo,
  ssoSession,
  startSsoSignIn,
} from '../../../../domain/sso/sign-in.js';
import { ProviderRequestError } from '../../../../domain/sso/ports.js';
import type { RoleMapping } from '../../../../domain/sso/types.js';
import { aUser, identityFakes } from '../../../fakes/identity.js';
import { ssoFakes } from '../../../fakes/sso.js';

const everything = {
  kind: 'user' as const,
  userId: 'admin',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(PERMISSIONS.map((p) => p.name as Permission)),
};

describe('roles after a sign-in', () => {
  it.each([
    // current roles, held only through mappings, granted now -> roles, mapped roles
    [[], [], ['operator'], ['operator'], ['operator']],
    [['operator'], ['operator'], [], [], []],
    [['operator', 'user'], ['operator'], [], ['user'], []],
    [['user'], [], ['user'], ['user'], []], // set by hand: stays a hand-set role
    [['user'], [], [], ['user'], []],
    [['a', 'b'], ['b'], ['c'], ['a', 'c'], ['c']],
    [['a'], ['a'], ['a', 'b'], ['a', 'b'], ['a', 'b']],
  ])('%j (mapped %j) granted %j -> %j (mapped %j)', (current, mapped, granted, roles, mappedRoles) => {
    expect(decideRoles(current, mapped, granted)).toEqual({ roles, mappedRoles });
  });

  it('grants the roles of the mappings whose value the groups carry, for the user’s tenant or any', () => {
    const mapping = (claimValue: string, role: string, tenantId: string | null): RoleMapping => ({
      id: `${claimValue}-${role}`,
      shortId: 'm',
      providerId: 'p',
      claimValue,
      role,
      tenantId,
      createdAt: '',
      updatedAt: '',
    });
    const mappings = [mapping('ops', 'operator', null), mapping('ops', 'user', 't1'), mapping('dev', 'user', null)];
    expect(rolesGranted(mappings, ['ops'], null, null)).toEqual(['operator']);
    expect(rolesGranted(mappings, ['ops'], 't1', null)).toEqual(['operator', 'user']);
    expect(rolesGranted(mappings, ['OPS', 'other'], 't1', null)).toEqual([]);
    // a tenant provider's mappings are of its tenant: a null one (stored before the rule) reads as its tenant, one
    // of another tenant never applies, and none applies to a user of another tenant or a global user
    const ofT1 = [mapping('ops', 'admin', null), mapping('ops', 'operator', 't2'), mapping('ops', 'user', 't1')];
    expect(rolesGranted(ofT1, ['ops'], 't1', 't1')).toEqual(['admin', 'user']);
    expect(rolesGranted(ofT1, ['ops'], 't2', 't1')).toEqual([]);
    expect(rolesGranted(ofT1, ['ops'], null, 't1')).toEqual([]);
  });
});

describe('return_to', () => {
  it.each([
    [undefined, '/'],
    ['', '/'],
    ['/', '/'],
    ['/deployments?status=failed#top', '/deployments?status=failed#top'],
    ['/a/../b', '/b'],
    ['//evil.example', undefined],
    ['/\\evil.example', undefined],
    ['https://evil.example/', undefined],
    ['javascript:alert(1)', undefined],
    ['deployments', undefined],
    ['/x\r\nSet-Cookie: a=b', undefined],
    ['/x y', undefined],
  ])('%j -> %j', (raw, expected) => {
    expect(safeReturnTo(raw)).toBe(expected);
  });
});

const corp = {
  name: 'Corp',
  issuer: 'https://idp.corp.example',
  client_id: 'deployer',
  client_secret: 'secret',
  authorization_endpoint: 'https://idp.corp.example/authorize',
  token_endpoint: 'https://idp.corp.example/token',
  jwks_uri: 'https://idp.corp.example/jwks',
  jit_provisioning: true,
};

/** A started sign-in and the callback the provider would send (state and binding of this browser). */
const started = async (fakes: ReturnType<typeof ssoFakes>, providerId: string) => {
  const start = await startSsoSignIn(fakes.sso, { provider: providerId, returnTo: '/home' });
  const url = new URL(start.location);
  const nonce = url.searchParams.get('nonce')!;
  const state = url.searchParams.get('state')!;
  return { start, url, nonce, callback: { provider: providerId, state, code: 'the-code', binding: start.binding } };
};

describe('completeSsoSignIn', () => {
  it('asks with PKCE S256, state and nonce, and provisions a new user with the mapped roles', async () => {
    // Prepare
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, everything, corp);
    await createMapping(fakes.admin, everything, provider.id, { claim_value: 'ops', role: 'operator' });
    const { url, nonce, callback } = await started(fakes, provider.id);
    fakes.oidc.claims = { sub: 'alice', email: 'alice@corp.example', email_verified: true, groups: ['ops'], nonce };
    // Act
    const signedIn = await completeSsoSignIn(fakes.sso, callback);
    // Assess
    expect(url.searchParams.get('code_challenge')).toBe(pkceChallenge(fakes.oidc.exchanges[0]!.codeVerifier));
    expect(fakes.oidc.exchanges[0]!.redirectUri).toBe(
      `https://deployer.example/api/v1/auth/sso/${provider.id}/callback`,
    );
    expect(signedIn.returnTo).toBe('/home');
    expect(signedIn.user).toMatchObject({
      email: 'alice@corp.example',
      username: 'alice',
      roles: ['operator'],
      mappedRoles: ['operator'],
      passwordHash: null,
      identityLink: { providerId: provider.id, providerName: 'Corp', subject: 'alice' },
    });
    expect(fakes.providers.providers.get(provider.id)!.linkedUsers).toBe(1);
    // the state was single use
    await expect(completeSsoSignIn(fakes.sso, callback)).rejects.toBeInstanceOf(InvalidTokenError);
  });

  it('refuses another browser, another nonce, an expired state, a token that does not verify', async () => {
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, everything, corp);
    const claims = { sub: 'bob', email: 'bob@corp.example', email_verified: true };
    const refusal = async (change: (c: Awaited<ReturnType<typeof started>>) => Promise<object> | object) => {
      const s = await started(fakes, provider.id);
      fakes.oidc.claims = { ...claims, nonce: s.nonce };
      return completeSsoSignIn(fakes.sso, { ...s.callback, ...(await change(s)) }).catch((e: unknown) => e);
    };
    expect(await refusal(() => ({ binding: 'another-browser' }))).toBeInstanceOf(InvalidTokenError);
    expect(await refusal(() => ({ binding: undefined }))).toBeInstanceOf(InvalidTokenError);
    expect(await refusal(() => ((fakes.oidc.claims = { ...claims, nonce: 'other' }), {}))).toBeInstanceOf(
      InvalidTokenError,
    );
    expect(await refusal(() => (fakes.clock.advance(601_000), {}))).toBeInstanceOf(InvalidTokenError);
    expect(await refusal(() => ((fakes.oidc.refuse = true), {}))).toBeInstanceOf(InvalidTokenError);
    fakes.oidc.refuse = false;
    expect(await refusal(() => ({ code: undefined }))).toBeInstanceOf(ValidationError);
    expect([...fakes.users.users.values()]).toEqual([]);
  });

  it('tells a provider that refuses the code (401) from a provider that fails (EXTERNAL_SERVICE_ERROR)', async () => {
    // Prepare
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, everything, corp);
    const attempt = async (failure: () => void) => {
      const s = await started(fakes, provider.id);
      fakes.oidc.claims = { sub: 'dan', email: 'dan@corp.example', email_verified: true, nonce: s.nonce };
      failure();
      const outcome = await completeSsoSignIn(fakes.sso, s.callback).catch((e: unknown) => e);
      fakes.oidc.exchangeFailure = undefined;
      fakes.oidc.keysFailure = undefined;
      return outcome;
    };
    // Act
    const refused = await attempt(
      () =>
        (fakes.oidc.exchangeFailure = new ProviderRequestError(
          'the token endpoint refused the code (not 2xx: invalid_grant).',
          true,
        )),
    );
    const down = await attempt(
      () => (fakes.oidc.exchangeFailure = new ProviderRequestError('The token endpoint could not be reached.')),
    );
    const keys = await attempt(
      () => (fakes.oidc.keysFailure = new ProviderRequestError('The JWKS could not be read (not 2xx).')),
    );
    // Assess
    expect(refused).toBeInstanceOf(InvalidCredentialsError);
    expect(down).toBeInstanceOf(ExternalServiceError);
    expect(down).toMatchObject({ code: 'EXTERNAL_SERVICE_ERROR', kind: 'external' });
    expect((down as Error).message).toBe(
      'The identity provider did not complete the sign-in: The token endpoint could not be reached.',
    );
    expect(keys).toMatchObject({ code: 'EXTERNAL_SERVICE_ERROR' });
    expect([...fakes.users.users.values()]).toEqual([]);
  });

  it('refuses a disabled provider and unknown users when it provisions nobody', async () => {
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, everything, { ...corp, jit_provisioning: false });
    const s = await started(fakes, provider.id);
    fakes.oidc.claims = { sub: 'carol', email: 'carol@corp.example', nonce: s.nonce };
    const unknown = await completeSsoSignIn(fakes.sso, s.callback).catch((e: unknown) => e);
    expect([unknown instanceof ForbiddenError, (unknown as ForbiddenError).details?.['reason']]).toEqual([
      true,
      'not_provisioned',
    ]);
    await updateProvider(fakes.admin, everything, provider.id, { enabled: false });
    await expect(startSsoSignIn(fakes.sso, { provider: provider.id })).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('links by verified email within the trust ceiling only', async () => {
    const fakes = ssoFakes();
    const manager = {
      ...everything,
      permissions: new Set<Permission>(['identity_providers:create', 'deployments:read']),
    };
    const provider = await createProvider(fakes.admin, manager, { ...corp, link_by_email: true });
    await fakes.users.create(aUser({ id: 'u-weak', email: 'weak@corp.example', username: 'weak', roles: [] }));
    await fakes.users.create(aUser({ id: 'u-admin', email: 'root@corp.example', username: 'root', roles: ['admin'] }));
    const signIn = async (email: string, verified: boolean) => {
      const s = await started(fakes, provider.id);
      fakes.oidc.claims = { sub: `sub-${email}`, email, email_verified: verified, nonce: s.nonce };
      return completeSsoSignIn(fakes.sso, s.callback).catch((e: unknown) => e);
    };
    expect(await signIn('weak@corp.example', false)).toBeInstanceOf(ForbiddenError);
    expect(((await signIn('weak@corp.example', true)) as { user: { id: string } }).user.id).toBe('u-weak');
    const admin = await signIn('root@corp.example', true);
    expect([admin instanceof ForbiddenError, (admin as ForbiddenError).details?.['reason']]).toEqual([
      true,
      'not_linkable',
    ]);
    expect(fakes.users.users.get('u-admin')!.identityLink).toBeUndefined();
  });
});

describe('completeSsoSignIn across tenants and unverified emails', () => {
  const ofTenant = (tenantId: string) => ({ ...everything, tenantId });

  it('refuses a user linked through a tenant’s provider once moved to another tenant or made global', async () => {
    for (const movedTo of ['tenant-b', null]) {
      // Prepare: a user linked through tenant-a's provider, then moved
      const fakes = ssoFakes();
      const provider = await createProvider(fakes.admin, ofTenant('tenant-a'), corp);
      await fakes.users.create(
        aUser({
          tenantId: movedTo,
          roles: ['user'],
          identityLink: { providerId: provider.id, providerName: 'Corp', subject: 'dan' },
        }),
      );
      const before = fakes.users.users.get(aUser().id);
      const s = await started(fakes, provider.id);
      fakes.oidc.claims = { sub: 'dan', email: 'dan@corp.example', email_verified: true, nonce: s.nonce };
      // Act
      const error = await completeSsoSignIn(fakes.sso, s.callback).catch((e: unknown) => e);
      // Assess
      expect([movedTo, error instanceof ForbiddenError, (error as ForbiddenError).details?.['reason']]).toEqual([
        movedTo,
        true,
        'other_tenant',
      ]);
      expect(fakes.users.users.get(aUser().id)).toEqual(before);
    }
  });

  it('refuses a sign-in whose user an admin moved out of the tenant (and unlinked) between its read and its write', async () => {
    // Prepare: the user's first sign-in write loses to the admin's move, which unlinks it
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, ofTenant('tenant-a'), corp);
    const link = { providerId: provider.id, providerName: 'Corp', subject: 'dan' };
    await fakes.users.create(aUser({ tenantId: 'tenant-a', roles: ['user'], identityLink: link }));
    const applySignIn = fakes.users.applySignIn.bind(fakes.users);
    let moved = false;
    fakes.users.applySignIn = async (user, changes) => {
      if (!moved) {
        moved = true;
        await fakes.users.update(user, { tenantId: 'tenant-b' }, fakes.clock.now(), link);
      }
      return applySignIn(user, changes);
    };
    const s = await started(fakes, provider.id);
    fakes.oidc.claims = { sub: 'dan', email: 'dan@corp.example', email_verified: true, nonce: s.nonce };
    // Act
    const error = await completeSsoSignIn(fakes.sso, s.callback).catch((e: unknown) => e);
    // Assess: refused, and the move stands (not re-linked)
    expect([error instanceof ForbiddenError, (error as ForbiddenError).details?.['reason']]).toEqual([
      true,
      'not_linked',
    ]);
    expect(fakes.users.users.get(aUser().id)).toMatchObject({ tenantId: 'tenant-b', identityLink: null });
  });

  it('signs in users of any tenant through a global provider', async () => {
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, everything, corp);
    await fakes.users.create(
      aUser({
        tenantId: 'tenant-b',
        identityLink: { providerId: provider.id, providerName: 'Corp', subject: 'dan' },
      }),
    );
    const s = await started(fakes, provider.id);
    fakes.oidc.claims = { sub: 'dan', email: 'dan@corp.example', nonce: s.nonce };
    expect((await completeSsoSignIn(fakes.sso, s.callback)).user.id).toBe(aUser().id);
  });

  it('provisions an account just in time only for a verified email, unless the provider is trusted for it', async () => {
    // Prepare
    const fakes = ssoFakes();
    const provider = await createProvider(fakes.admin, everything, corp);
    const signIn = async (claims: Record<string, unknown>) => {
      const s = await started(fakes, provider.id);
      fakes.oidc.claims = { ...claims, nonce: s.nonce };
      return completeSsoSignIn(fakes.sso, s.callback).catch((e: unknown) => e);
    };
    // Act + Assess: unverified (false, absent, or not exactly true): refused, nobody created
    for (const verified of [{ email_verified: false }, {}, { email_verified: 'yes' }]) {
      const error = await signIn({ sub: 'eve', email: 'ceo@corp.example', ...verified });
      expect([error instanceof ForbiddenError, (error as ForbiddenError).details?.['reason']]).toEqual([
        true,
        'unverified_email',
      ]);
    }
    expect([...fakes.users.users.values()]).toEqual([]);
    // trusted: created, its email recorded as not verified
    await updateProvider(fakes.admin, everything, provider.id, { jit_trust_unverified_email: true });
    const created = (await signIn({ sub: 'eve', email: 'eve@corp.example', email_verified: false })) as {
      user: { email: string; emailVerified: boolean };
    };
    expect([created.user.email, created.user.emailVerified]).toEqual(['eve@corp.example', false]);
  });
});

describe('ssoSession', () => {
  it('asks a user with two-factor for a code unless the provider is trusted for it', async () => {
    const fakes = ssoFakes();
    const identity = identityFakes();
    const user = aUser({ twoFactor: { enabled: true, secret: 'x', lastStep: null } });
    await identity.users.create(user);
    const provider = await createProvider(fakes.admin, everything, corp);
    const stored = fakes.providers.providers.get(provider.id)!;
    // Act
    const untrusted = await ssoSession(identity.deps, { user, provider: stored, returnTo: '/' });
    const trusted = await ssoSession(identity.deps, {
      user,
      provider: { ...stored, trustedFor2fa: true },
      returnTo: '/',
    });
    // Assess
    expect(untrusted.kind).toBe('two_factor');
    expect(trusted.kind).toBe('session');
  });
});
