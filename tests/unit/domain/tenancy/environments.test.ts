import { describe, expect, it } from 'vitest';
import {
  createEnvironment,
  deleteEnvironment,
  getEnvironment,
  listEnvironments,
  updateEnvironment,
} from '../../../../domain/tenancy/environments.js';
import { createFreeze } from '../../../../domain/tenancy/freezes.js';
import { createTenant } from '../../../../domain/tenancy/tenants.js';
import { callerWith, tenancyFakes } from '../../../fakes/tenancy.js';

const admin = callerWith('admin');

const withTenants = async () => {
  const fakes = tenancyFakes();
  const acme = await createTenant(fakes.deps, admin, { name: 'Acme', slug: 'acme' });
  const globex = await createTenant(fakes.deps, admin, { name: 'Globex', slug: 'globex' });
  return { ...fakes, acme, globex };
};

describe('environments', () => {
  it('creates a global environment and one for a tenant named by short id', async () => {
    const { deps, acme } = await withTenants();

    const global = await createEnvironment(deps, admin, { name: 'staging' });
    const scoped = await createEnvironment(deps, admin, { name: 'production', tenant_id: acme.short_id });

    expect(global).toMatchObject({ name: 'staging', tenant_id: null });
    expect(scoped).toMatchObject({ name: 'production', tenant_id: acme.id });
  });

  it('refuses a tenant that does not exist (400 on tenant_id)', async () => {
    const { deps } = await withTenants();

    await expect(createEnvironment(deps, admin, { name: 'x', tenant_id: 'nope' })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'tenant_id' }] },
    });
  });

  it('keeps names unique within a tenant scope, case-insensitively, but not across scopes', async () => {
    const { deps, acme, globex } = await withTenants();
    await createEnvironment(deps, admin, { name: 'production', tenant_id: acme.id });

    await expect(createEnvironment(deps, admin, { name: 'Production', tenant_id: acme.id })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(createEnvironment(deps, admin, { name: 'production', tenant_id: globex.id })).resolves.toMatchObject({
      tenant_id: globex.id,
    });
    await expect(createEnvironment(deps, admin, { name: 'production' })).resolves.toMatchObject({ tenant_id: null });
  });

  it("puts a tenant-scoped caller's environments in its tenant; another tenant or global is 403", async () => {
    const { deps, acme, globex } = await withTenants();
    const scoped = callerWith('admin', acme.id);

    const created = await createEnvironment(deps, scoped, { name: 'qa' });

    expect(created.tenant_id).toBe(acme.id);
    await expect(createEnvironment(deps, scoped, { name: 'qa2', tenant_id: globex.id })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(createEnvironment(deps, scoped, { name: 'qa3', tenant_id: null })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(createEnvironment(deps, scoped, { name: 'qa4', tenant_id: 'no-such-tenant' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(createEnvironment(deps, scoped, { name: 'qa5', tenant_id: acme.short_id })).resolves.toMatchObject({
      tenant_id: acme.id,
    });
  });

  it('shows a tenant-scoped caller its tenant and global environments, read-only for the global ones', async () => {
    const { deps, acme, globex } = await withTenants();
    const global = await createEnvironment(deps, admin, { name: 'shared' });
    const mine = await createEnvironment(deps, admin, { name: 'mine', tenant_id: acme.id });
    const theirs = await createEnvironment(deps, admin, { name: 'theirs', tenant_id: globex.id });
    const scoped = callerWith('admin', acme.id);

    const listed = await listEnvironments(deps, scoped, { page: 1, limit: 50, tenant_id: globex.id });

    expect(listed.data.map((e) => e.name)).toEqual(['mine', 'shared']);
    await expect(getEnvironment(deps, scoped, theirs.short_id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(updateEnvironment(deps, scoped, theirs.id, { name: 'x' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(updateEnvironment(deps, scoped, global.id, { name: 'x' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(deleteEnvironment(deps, scoped, global.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(updateEnvironment(deps, scoped, mine.id, { name: 'mine-2' })).resolves.toMatchObject({
      name: 'mine-2',
    });
  });

  it('filters by tenant_id for global callers (exact: global environments are left out)', async () => {
    const { deps, acme } = await withTenants();
    await createEnvironment(deps, admin, { name: 'shared' });
    await createEnvironment(deps, admin, { name: 'mine', tenant_id: acme.id });

    const listed = await listEnvironments(deps, admin, { page: 1, limit: 50, tenant_id: acme.id });
    const all = await listEnvironments(deps, admin, { page: 1, limit: 50 });

    expect(listed.data.map((e) => e.name)).toEqual(['mine']);
    expect(all.meta.total).toBe(2);
  });

  it('renames, conflicts on a taken name, and refuses to move to another tenant', async () => {
    const { deps, acme, globex } = await withTenants();
    const production = await createEnvironment(deps, admin, { name: 'production', tenant_id: acme.id });
    await createEnvironment(deps, admin, { name: 'staging', tenant_id: acme.id });

    await expect(updateEnvironment(deps, admin, production.id, { name: 'Staging' })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(updateEnvironment(deps, admin, production.id, { tenant_id: globex.id })).rejects.toMatchObject({
      details: { fields: [{ field: 'tenant_id' }] },
    });
    await expect(updateEnvironment(deps, admin, production.id, { tenant_id: null })).rejects.toMatchObject({
      details: { fields: [{ field: 'tenant_id' }] },
    });
    await expect(
      updateEnvironment(deps, admin, production.id, { name: 'prod', tenant_id: acme.short_id }),
    ).resolves.toMatchObject({ name: 'prod', tenant_id: acme.id });
  });

  it('refuses to delete an environment a freeze names (409); 404 when missing', async () => {
    const { deps } = await withTenants();
    const production = await createEnvironment(deps, admin, { name: 'production' });
    await createFreeze(deps, admin, {
      name: 'Holidays',
      start_time: '2026-12-20T00:00:00Z',
      end_time: '2027-01-02T00:00:00Z',
      environment_id: production.id,
    });

    await expect(deleteEnvironment(deps, admin, production.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(deleteEnvironment(deps, admin, 'missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
