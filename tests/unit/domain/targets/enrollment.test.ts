import { describe, expect, it } from 'vitest';
import { authenticateAgent, heartbeat } from '../../../../domain/targets/agent-protocol.js';
import {
  createEnrollmentToken,
  listEnrollmentTokens,
  registerAgent,
  revokeEnrollmentToken,
} from '../../../../domain/targets/enrollment.js';
import { agentGone, statusOf } from '../../../../domain/targets/status.js';
import { deleteTarget, getTarget, listTargets, updateTarget } from '../../../../domain/targets/targets.js';
import { PERMISSIONS } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { targetsFakes } from '../../../fakes/targets.js';

const TENANT = { id: '11111111-1111-4111-8111-111111111111', shortId: 'tA', name: 'Acme', slug: 'acme' };
const OTHER = { id: '22222222-2222-4222-8222-222222222222', shortId: 'tB', name: 'Other', slug: 'other' };
const ENV = { id: '33333333-3333-4333-8333-333333333333', shortId: 'eA', name: 'prod', tenantId: TENANT.id };

const caller = (tenantId: string | null = null): Caller => ({
  kind: 'user',
  userId: 'u1',
  tenantId,
  roles: ['admin'],
  permissions: new Set(PERMISSIONS.map((p) => p.name)),
});
const host = {
  name: 'web-1',
  hostname: 'web-1.local',
  os: 'linux',
  arch: 'x64',
  agent_version: '1.0.0',
  tags: [{ key: 'role', value: 'web' }],
};

describe('target status', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();
  const at = (lastHeartbeatAt: string | null, more: { connectionId?: string; signedOffAt?: string } = {}) =>
    statusOf({ lastHeartbeatAt, ...more }, now);

  it('is online under 60 s, stale under 300 s, offline after or never seen', () => {
    expect([at(ago(59.9)), at(ago(60)), at(ago(299.9)), at(ago(300)), at(null)]).toEqual([
      'online',
      'stale',
      'stale',
      'offline',
      'offline',
    ]);
  });

  it('means the same for an agent that holds a connection: a half-open socket does not keep a silent host online', () => {
    expect([at(ago(59.9), { connectionId: 'c1' }), at(ago(61), { connectionId: 'c1' })]).toEqual(['online', 'stale']);
  });

  it('is offline at once after the agent said goodbye, until it is heard from again', () => {
    expect([
      at(ago(1), { signedOffAt: ago(0.5) }),
      at(ago(1), { signedOffAt: ago(1) }),
      at(ago(0.5), { signedOffAt: ago(1) }),
    ]).toEqual(['offline', 'offline', 'online']);
    const target = { name: 'web-1', lastHeartbeatAt: ago(2), signedOffAt: ago(1) };
    expect(agentGone(target, ago(0), now)).toBe(
      `its agent was stopped at ${ago(1)} (it said goodbye) and has not started again`,
    );
    expect(agentGone({ ...target, signedOffAt: ago(3) }, ago(0), now)).toBeUndefined();
  });
});

describe('enrollment', () => {
  it('registers up to max_uses hosts with one token until it expires, each with its own agent token', async () => {
    // Prepare
    const { deps, clock, targets } = targetsFakes();
    const { token, expires_at } = await createEnrollmentToken(deps, caller(), { expires_in_hours: 2, max_uses: 3 });
    // Act
    const first = await registerAgent(deps, { ...host, enrollment_token: token });
    const second = await registerAgent(deps, { ...host, name: 'web-2', enrollment_token: token });
    clock.advance(2 * 3_600_000);
    // Assess
    expect(expires_at).toBe('2026-11-22T12:00:00.000Z');
    expect(first.agent_token).toMatch(/^dpa_/);
    expect(first.agent_token).not.toBe(second.agent_token);
    expect([...targets.targets.values()].map((t) => t.name)).toEqual(['web-1', 'web-2']);
    expect(JSON.stringify([...targets.targets.values()])).not.toContain(first.agent_token);
    await expect(registerAgent(deps, { ...host, enrollment_token: token })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await expect(registerAgent(deps, { ...host, enrollment_token: 'det_nope' })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
  });

  it('keeps a description and names its creator in the list, never the secret', async () => {
    // Prepare
    const { deps } = targetsFakes();
    const named: Caller = { ...caller(), userName: 'Ada Admin' };
    // Act
    const created = await createEnrollmentToken(deps, named, { description: '  web fleet, rack 4 ', tags: [] });
    await createEnrollmentToken(deps, caller(), { description: '   ' });
    const listed = await listEnrollmentTokens(deps, caller(), { page: 1, limit: 50 });
    // Assess: trimmed, blank is null; the creator's name when known, else the id
    expect([created.description, created.created_by_name]).toEqual(['web fleet, rack 4', 'Ada Admin']);
    expect(listed.data.map((t) => [t.description, t.created_by, t.created_by_name])).toEqual([
      ['web fleet, rack 4', 'u1', 'Ada Admin'],
      [null, 'u1', 'u1'],
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.token);
  });

  it('gives the target its token’s tags, not the agent’s, and says which in the answer', async () => {
    // Prepare
    const { deps, targets } = targetsFakes();
    const { token } = await createEnrollmentToken(deps, caller(), { tags: [{ key: 'tier', value: 'db' }] });
    // Act: the agent asks for role=web
    const answer = await registerAgent(deps, { ...host, enrollment_token: token });
    // Assess
    expect(answer.tags).toEqual([{ key: 'tier', value: 'db' }]);
    expect(targets.targets.get(answer.target_id)?.tags).toEqual([{ key: 'tier', value: 'db' }]);
  });

  it('gives targets the token’s tenant and environment, checked to exist and to agree', async () => {
    const { deps } = targetsFakes({ tenants: [TENANT, OTHER], environments: [ENV] });
    const scoped = await createEnrollmentToken(deps, caller(), { environment_id: 'eA' });
    expect(scoped).toMatchObject({ tenant_id: TENANT.id, environment_id: ENV.id });
    const { target_id } = await registerAgent(deps, { ...host, enrollment_token: scoped.token });
    expect(await getTarget(deps, caller(), target_id)).toMatchObject({
      tenant_id: TENANT.id,
      environment_id: ENV.id,
      status: 'online',
    });

    await expect(createEnrollmentToken(deps, caller(), { tenant_id: 'missing' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'tenant_id' }] },
    });
    await expect(
      createEnrollmentToken(deps, caller(), { tenant_id: OTHER.id, environment_id: ENV.id }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'environment_id' }] },
    });
    await expect(createEnrollmentToken(deps, caller(TENANT.id), { tenant_id: OTHER.id })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(await createEnrollmentToken(deps, caller(TENANT.id), {})).toMatchObject({ tenant_id: TENANT.id });
  });
});

describe('enrollment token rules', () => {
  it('gives the target the token’s tags, never the tags the agent sends', async () => {
    const { deps, targets } = targetsFakes();
    const { token, tags } = await createEnrollmentToken(deps, caller(), { tags: [{ key: 'role', value: 'web' }] });
    const { target_id } = await registerAgent(deps, {
      ...host,
      tags: [
        { key: 'role', value: 'db' },
        { key: 'admin', value: 'yes' },
      ],
      enrollment_token: token,
    });
    expect(tags).toEqual([{ key: 'role', value: 'web' }]);
    expect(targets.targets.get(target_id)?.tags).toEqual([{ key: 'role', value: 'web' }]);
  });

  it('allows one registration by default and max_uses in all, counting uses', async () => {
    const { deps } = targetsFakes();
    const single = await createEnrollmentToken(deps, caller(), {});
    const fleet = await createEnrollmentToken(deps, caller(), { max_uses: 2 });
    await registerAgent(deps, { ...host, enrollment_token: single.token });
    await registerAgent(deps, { ...host, enrollment_token: fleet.token });
    await registerAgent(deps, { ...host, enrollment_token: fleet.token });
    expect(single.max_uses).toBe(1);
    await expect(registerAgent(deps, { ...host, enrollment_token: single.token })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await expect(registerAgent(deps, { ...host, enrollment_token: fleet.token })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    const listed = await listEnrollmentTokens(deps, caller(), { page: 1, limit: 50 });
    expect(listed.data.map((t) => [t.uses, t.max_uses])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(JSON.stringify(listed)).not.toContain(single.token);
    expect(JSON.stringify(listed)).not.toContain('tokenHash');
    await expect(createEnrollmentToken(deps, caller(), { max_uses: 1001 })).rejects.toMatchObject({
      details: { fields: [{ field: 'max_uses' }] },
    });
    await expect(createEnrollmentToken(deps, caller(), { max_uses: 0 })).rejects.toMatchObject({
      details: { fields: [{ field: 'max_uses' }] },
    });
  });

  it('refuses a token whose last use was taken between the read and the conditional write', async () => {
    const { deps, enrollmentTokens } = targetsFakes();
    const { token } = await createEnrollmentToken(deps, caller(), {});
    enrollmentTokens.takeUse = async () => false; // another registration won the race
    await expect(registerAgent(deps, { ...host, enrollment_token: token })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
  });

  it('revokes: registration is refused; tenant-scoped callers see and revoke only their tenant’s tokens', async () => {
    const { deps } = targetsFakes({ tenants: [TENANT, OTHER] });
    const mine = await createEnrollmentToken(deps, caller(TENANT.id), { max_uses: 5 });
    const theirs = await createEnrollmentToken(deps, caller(OTHER.id), {});
    expect((await listEnrollmentTokens(deps, caller(TENANT.id), { page: 1, limit: 50 })).data.map((t) => t.id)).toEqual(
      [mine.id],
    );
    expect((await listEnrollmentTokens(deps, caller(), { page: 1, limit: 50 })).meta.total).toBe(2);
    await expect(revokeEnrollmentToken(deps, caller(TENANT.id), theirs.id)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(revokeEnrollmentToken(deps, caller(), 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await revokeEnrollmentToken(deps, caller(TENANT.id), mine.id);
    await expect(registerAgent(deps, { ...host, enrollment_token: mine.token })).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    await registerAgent(deps, { ...host, enrollment_token: theirs.token });
  });
});

describe('targets', () => {
  const enrolled = async (tenantId: string | null = null) => {
    const fakes = targetsFakes({ tenants: [TENANT] });
    const { token } = await createEnrollmentToken(fakes.deps, caller(tenantId), {
      tags: [{ key: 'role', value: 'web' }],
    });
    const registered = await registerAgent(fakes.deps, { ...host, enrollment_token: token });
    return { ...fakes, ...registered };
  };

  it('goes stale then offline without heartbeats, and online again with one', async () => {
    const { deps, clock, agent_token, target_id } = await enrolled();
    const agent = await authenticateAgent(deps, `Bearer ${agent_token}`);
    clock.advance(61_000);
    expect((await getTarget(deps, caller(), target_id)).status).toBe('stale');
    clock.advance(240_000);
    expect((await listTargets(deps, caller(), { page: 1, limit: 50, status: 'offline' })).data).toHaveLength(1);
    await heartbeat(deps, agent);
    expect((await getTarget(deps, caller(), target_id)).status).toBe('online');
  });

  it('hides another tenant’s targets (404) and filters by tags (all pairs)', async () => {
    const { deps, target_id } = await enrolled(TENANT.id);
    await expect(getTarget(deps, caller(OTHER.id), target_id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(deleteTarget(deps, caller(OTHER.id), target_id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await listTargets(deps, caller(OTHER.id), { page: 1, limit: 50 })).meta.total).toBe(0);
    expect(
      (await listTargets(deps, caller(TENANT.id), { page: 1, limit: 50, tags: [{ key: 'role', value: 'web' }] })).meta
        .total,
    ).toBe(1);
    expect(
      (
        await listTargets(deps, caller(), {
          page: 1,
          limit: 50,
          tags: [
            { key: 'role', value: 'web' },
            { key: 'env', value: 'x' },
          ],
        })
      ).meta.total,
    ).toBe(0);
  });

  it('renames and retags (one value per key), and deleting revokes the agent token', async () => {
    const { deps, agent_token, target_id } = await enrolled();
    const updated = await updateTarget(deps, caller(), target_id, {
      name: 'web-one',
      tags: [
        { key: 'a', value: '1' },
        { key: 'a', value: '2' },
      ],
    });
    expect(updated).toMatchObject({ name: 'web-one', tags: [{ key: 'a', value: '2' }] });
    await deleteTarget(deps, caller(), target_id);
    await expect(authenticateAgent(deps, `Bearer ${agent_token}`)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('refuses user credentials and malformed headers on agent endpoints', async () => {
    const { deps } = await enrolled();
    await expect(authenticateAgent(deps, 'Bearer eyJhbGciOiJFUzI1NiJ9.x.y')).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    await expect(authenticateAgent(deps, 'Bearer dpl_userapikey')).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(authenticateAgent(deps, undefined)).rejects.toMatchObject({ code: 'MISSING_AUTH_HEADER' });
    await expect(authenticateAgent(deps, 'Token x')).rejects.toMatchObject({ code: 'INVALID_AUTH_HEADER' });
  });
});
