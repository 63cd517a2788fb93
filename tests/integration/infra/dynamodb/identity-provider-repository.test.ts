// The single sign-on records on DynamoDB Local: name and issuer unique per scope and moved on update, the revision
// condition, links unique per subject and counted on the provider (a delete waits for 0, a user's deletion releases
// its link), mappings in the provider's partition, single-use sign-in states.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../../domain/errors.js';
import type { IdentityProvider, SignInState } from '../../../../domain/sso/types.js';
import { DynamoIdentityProviderRepository } from '../../../../infra/dynamodb/identity-provider-repository.js';
import { DynamoSignInStates } from '../../../../infra/dynamodb/sso-state-repository.js';
import { DynamoUserRepository } from '../../../../infra/dynamodb/user-repository.js';
import { aUser } from '../../../fakes/identity.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('idps');
const providers = new DynamoIdentityProviderRepository(db, table);
const users = new DynamoUserRepository(db, table);
const states = new DynamoSignInStates(db, table);

let n = 0;
const aProvider = (overrides: Partial<IdentityProvider> = {}): IdentityProvider => {
  n += 1;
  return {
    id: randomUUID(),
    shortId: `p${n}`,
    name: `Provider ${n}`,
    type: 'oidc',
    issuer: `https://idp${n}.example`,
    clientId: 'c',
    clientSecret: 'v1.encrypted',
    tokenAuthMethod: 'client_secret_basic',
    scopes: ['openid'],
    authorizationEndpoint: 'https://idp.example/a',
    tokenEndpoint: 'https://idp.example/t',
    userinfoEndpoint: null,
    jwksUri: 'https://idp.example/j',
    idTokenAlgorithms: ['RS256'],
    emailClaim: 'email',
    groupsClaim: 'groups',
    jitProvisioning: true,
    jitTenantId: null,
    jitTrustUnverifiedEmail: false,
    linkByEmail: false,
    trustedFor2fa: false,
    enabled: true,
    tenantId: null,
    trustCeiling: [],
    createdBy: 'u',
    createdAt: `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`,
    updatedAt: '2026-01-01T00:00:00.000Z',
    linkedUsers: 0,
    revision: 1,
    ...overrides,
  };
};
const aLinkedUser = (provider: IdentityProvider, subject: string) => {
  n += 1;
  return aUser({
    id: randomUUID(),
    shortId: `u${n}`,
    email: `user${n}@corp.example`,
    username: `user${n}`,
    passwordHash: null,
    identityLink: { providerId: provider.id, providerName: provider.name, subject },
  });
};

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoIdentityProviderRepository', () => {
  it('keeps names (case-insensitive) and issuers unique per scope, and moves the claims on update', async () => {
    // Prepare
    const first = aProvider({ name: 'Corp' });
    await providers.create(first);
    // Act + Assess
    const sameName = await providers.create(aProvider({ name: 'CORP' })).catch((e: unknown) => e);
    const sameIssuer = await providers.create(aProvider({ issuer: first.issuer })).catch((e: unknown) => e);
    expect([(sameName as ConflictError).details?.['field'], (sameIssuer as ConflictError).details?.['field']]).toEqual([
      'name',
      'issuer',
    ]);
    await providers.create(aProvider({ name: 'Corp', issuer: first.issuer, tenantId: randomUUID() })); // another scope
    const renamed = { ...first, name: 'Corp 2', issuer: 'https://moved.example', revision: 2 };
    await providers.update(first, renamed);
    expect(await providers.get(first.shortId)).toMatchObject({
      name: 'Corp 2',
      issuer: 'https://moved.example',
      type: 'oidc',
    });
    await providers.create(aProvider({ name: 'Corp', issuer: first.issuer })); // the old claims were released
    await expect(providers.update(first, { ...first, name: 'Stale', revision: 2 })).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  it('counts linked users, links a subject to one user only, and deletes the provider only at 0', async () => {
    // Prepare
    const provider = aProvider();
    await providers.create(provider);
    const linked = aLinkedUser(provider, 'sub-1');
    await users.create(linked);
    await providers.putMapping({
      id: randomUUID(),
      shortId: 'm1',
      providerId: provider.id,
      claimValue: 'g',
      role: 'user',
      tenantId: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    // Act + Assess
    expect((await providers.get(provider.id))?.linkedUsers).toBe(1);
    expect((await users.findByLink(provider.id, 'sub-1'))?.id).toBe(linked.id);
    const twin = await users.create(aLinkedUser(provider, 'sub-1')).catch((e: unknown) => e);
    expect((twin as ConflictError).details?.['field']).toBe('identity_provider');
    const unlinked = aUser({ id: randomUUID(), shortId: `x${n}`, email: `x${n}@corp.example`, username: `x${n}` });
    await users.create(unlinked);
    expect(
      await users.link(unlinked, { providerId: provider.id, providerName: 'P', subject: 'sub-1' }, new Date()),
    ).toBe(false);
    expect(
      await users.link(unlinked, { providerId: provider.id, providerName: 'P', subject: 'sub-2' }, new Date()),
    ).toBe(true);
    expect((await providers.get(provider.id))?.linkedUsers).toBe(2);
    await expect(providers.delete((await providers.get(provider.id))!)).rejects.toBeInstanceOf(ConflictError);
    await users.delete(linked);
    await users.delete((await users.get(unlinked.id))!);
    expect(await users.findByLink(provider.id, 'sub-1')).toBeUndefined();
    await providers.delete((await providers.get(provider.id))!);
    expect(await providers.get(provider.id)).toBeUndefined();
    expect(await providers.listMappings(provider.id)).toEqual([]);
  });

  it('unlinks a user in the same conditional write as an admin edit: link, mapped roles, subject claim, count', async () => {
    // Prepare
    const provider = aProvider();
    await providers.create(provider);
    await users.create({
      ...aLinkedUser(provider, 'sub-move'),
      roles: ['operator', 'user'],
      mappedRoles: ['operator'],
    });
    const user = (await users.findByLink(provider.id, 'sub-move'))!;
    const link = user.identityLink!;
    // Act: a write at a stale revision changes nothing; at the current one, all of it
    const stale = await users.update({ ...user, revision: user.revision - 1 }, { roles: ['user'] }, new Date(), link);
    const done = await users.update(user, { roles: ['user'] }, new Date(), link);
    // Assess
    expect([stale, done]).toEqual([false, true]);
    expect(await users.get(user.id)).toMatchObject({ roles: ['user'], mappedRoles: [], identityLink: null });
    expect(await users.findByLink(provider.id, 'sub-move')).toBeUndefined();
    expect((await providers.get(provider.id))?.linkedUsers).toBe(0);
    await providers.delete((await providers.get(provider.id))!);
  });

  it('consumes a sign-in state once, and not after it expired', async () => {
    const state: SignInState = {
      stateHash: randomUUID(),
      providerId: 'p',
      nonce: 'n',
      codeVerifier: 'v',
      bindingHash: 'b',
      returnTo: '/',
      expiresAt: Date.parse('2026-01-01T00:10:00.000Z'),
    };
    await states.put(state);
    await states.put({ ...state, stateHash: `${state.stateHash}-late` });
    const now = new Date('2026-01-01T00:05:00.000Z');
    const [one, two] = await Promise.all([states.consume(state.stateHash, now), states.consume(state.stateHash, now)]);
    expect([one, two].filter((s) => s !== undefined)).toEqual([state]);
    expect(await states.consume(`${state.stateHash}-late`, new Date('2026-01-01T00:10:00.001Z'))).toBeUndefined();
  });
});
