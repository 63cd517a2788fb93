// Attack tests over HTTP against the real local stack: enrollment cannot pick its own privileges. An agent's
// tags are ignored (the token's apply), a token allows exactly max_uses registrations even under a race, lists
// never show the secret, a revoked token is refused, and a tenant-scoped user cannot see or revoke another
// tenant's tokens.
import { describe, expect, it } from 'vitest';
import { apiClient } from '../../support/http.js';
import { createUser } from '../../support/users.js';
import { useStack } from '../../support/stack-fixture.js';

const e2e = useStack('sec-enroll');

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });
const register = (token: string, name: string, tags: { key: string; value: string }[] = []) =>
  call('POST', '/agent/register', undefined, {
    enrollment_token: token,
    name,
    hostname: name,
    os: 'linux',
    arch: 'x64',
    agent_version: '1.0.0',
    tags,
  });

describe('enrollment tokens decide what a target gets', () => {
  it('gives a target the token’s tags: an agent sending role=db on a role=web token gets role=web only', async () => {
    // Prepare
    const created = await call('POST', '/targets/enrollment-tokens', e2e.admin, {
      tags: [{ key: 'role', value: 'web' }],
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      id: expect.any(String),
      token: expect.stringMatching(/^det_/),
      tags: [{ key: 'role', value: 'web' }],
      max_uses: 1,
    });
    // Act: the attack
    const reply = await register(created.json.token, 'sneaky', [
      { key: 'role', value: 'db' },
      { key: 'env', value: 'prod' },
    ]);
    // Assess
    expect(reply.status).toBe(201);
    const target = await call('GET', `/targets/${reply.json.target_id}`, e2e.admin);
    expect(target.json.tags).toEqual([{ key: 'role', value: 'web' }]);
    expect(
      (await call('GET', '/targets?tag=role=db', e2e.admin)).json.data.map((t: { id: string }) => t.id),
    ).not.toContain(reply.json.target_id);
  });

  it('enrolls exactly max_uses hosts when 10 register at once with a max_uses 3 token', async () => {
    // Prepare
    const { token, id } = (await call('POST', '/targets/enrollment-tokens', e2e.admin, { max_uses: 3 })).json;
    // Act
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => register(token, `race-${i}`)));
    // Assess
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 401, 401, 401, 401, 401, 401, 401]);
    expect(replies.filter((r) => r.status === 401).every((r) => r.json.error.code === 'INVALID_CREDENTIALS')).toBe(
      true,
    );
    const listed = (await call('GET', '/targets/enrollment-tokens?limit=100', e2e.admin)).json.data.find(
      (t: { id: string }) => t.id === id,
    );
    expect(listed).toMatchObject({ uses: 3, max_uses: 3 });
    expect((await call('GET', '/targets?search=race-', e2e.admin)).json.meta.total).toBe(3);
  });

  it('refuses a second registration with a default (single-use) token', async () => {
    const { token } = (await call('POST', '/targets/enrollment-tokens', e2e.admin, {})).json;
    expect((await register(token, 'once')).status).toBe(201);
    const again = await register(token, 'twice');
    expect([again.status, again.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });

  it('lists tokens without their secret, and validates max_uses', async () => {
    const created = (
      await call('POST', '/targets/enrollment-tokens', e2e.admin, { max_uses: 5, tags: [{ key: 'tier', value: '1' }] })
    ).json;
    const list = await call('GET', '/targets/enrollment-tokens?limit=100', e2e.admin);
    expect(list.status).toBe(200);
    expect(list.json.meta).toMatchObject({ page: 1, limit: 100 });
    const listed = list.json.data.find((t: { id: string }) => t.id === created.id);
    expect(listed).toMatchObject({
      uses: 0,
      max_uses: 5,
      tags: [{ key: 'tier', value: '1' }],
      expires_at: created.expires_at,
      created_by: expect.any(String),
      created_at: expect.any(String),
      tenant_id: null,
    });
    expect(JSON.stringify(list.json)).not.toContain(created.token);
    expect(JSON.stringify(list.json)).not.toMatch(/det_|tokenHash|token_hash/);
    const tooMany = await call('POST', '/targets/enrollment-tokens', e2e.admin, { max_uses: 1001 });
    expect([tooMany.status, tooMany.json.error.details.fields[0].field]).toEqual([400, 'max_uses']);
  });

  it('refuses registration with a revoked token (401), and revoking twice is 404', async () => {
    // Prepare
    const { token, id } = (await call('POST', '/targets/enrollment-tokens', e2e.admin, { max_uses: 10 })).json;
    // Act
    const revoked = await call('DELETE', `/targets/enrollment-tokens/${id}`, e2e.admin);
    // Assess
    expect(revoked.status).toBe(204);
    const reply = await register(token, 'after-revoke');
    expect([reply.status, reply.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect((await call('DELETE', `/targets/enrollment-tokens/${id}`, e2e.admin)).status).toBe(404);
    expect(
      (await call('GET', '/targets/enrollment-tokens?limit=100', e2e.admin)).json.data.map((t: { id: string }) => t.id),
    ).not.toContain(id);
  });
});

describe('tenant-scoped users and enrollment tokens', () => {
  // Slow only because it hashes a password and logs in a second user, on a machine whose CPU is shared.
  it('cannot list, revoke or create another tenant’s tokens', { timeout: 90_000 }, async () => {
    // Prepare: two tenants, a token in each, and an admin scoped to tenant A
    const tenantA = (await call('POST', '/tenants', e2e.admin, { name: 'Enroll A', slug: 'enroll-a' })).json;
    const tenantB = (await call('POST', '/tenants', e2e.admin, { name: 'Enroll B', slug: 'enroll-b' })).json;
    const tokenB = (await call('POST', '/targets/enrollment-tokens', e2e.admin, { tenant_id: tenantB.id })).json;
    await createUser('scoped@example.com', 'scoped-password', ['admin'], tenantA.id);
    const scoped = (await api.login({ email: 'scoped@example.com', password: 'scoped-password' })).token;
    const tokenA = await call('POST', '/targets/enrollment-tokens', scoped, {});
    expect([tokenA.status, tokenA.json.tenant_id]).toEqual([201, tenantA.id]);
    // Act + Assess
    const listed = (await call('GET', '/targets/enrollment-tokens?limit=100', scoped)).json.data.map(
      (t: { id: string }) => t.id,
    );
    expect(listed).toEqual([tokenA.json.id]);
    expect((await call('DELETE', `/targets/enrollment-tokens/${tokenB.id}`, scoped)).status).toBe(404);
    expect((await call('POST', '/targets/enrollment-tokens', scoped, { tenant_id: tenantB.id })).status).toBe(403);
    expect((await register(tokenB.token, 'still-works')).status).toBe(201);
    expect((await call('DELETE', `/targets/enrollment-tokens/${tokenA.json.id}`, scoped)).status).toBe(204);
  });
});
