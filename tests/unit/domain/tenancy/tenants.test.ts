import { describe, expect, it } from 'vitest';
import { createEnvironment, deleteEnvironment } from '../../../../domain/tenancy/environments.js';
import {
  createTenant,
  deleteTenant,
  getTenant,
  listTenants,
  updateTenant,
} from '../../../../domain/tenancy/tenants.js';
import { callerWith, tenancyFakes } from '../../../fakes/tenancy.js';

const admin = callerWith('admin');

describe('tenants', () => {
  it('creates a tenant with a short id and timestamps, slug lower-cased', async () => {
    const { deps, tenants } = tenancyFakes();

    const view = await createTenant(deps, admin, { name: 'Acme', slug: 'ACME' });

    expect(view).toMatchObject({
      name: 'Acme',
      slug: 'acme',
      short_id: 's1',
      created_at: '2026-11-22T10:00:00.000Z',
      updated_at: '2026-11-22T10:00:00.000Z',
    });
    expect(await tenants.get(view.id)).toMatchObject({ slug: 'acme' });
  });

  it('refuses a tenant-scoped caller creating, changing or deleting tenants (403)', async () => {
    const { deps } = tenancyFakes();
    const acme = await createTenant(deps, admin, { name: 'Acme', slug: 'acme' });
    const scoped = callerWith('admin', acme.id);

    await expect(createTenant(deps, scoped, { name: 'Other', slug: 'other' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      details: { reason: 'tenant_restriction' },
    });
    await expect(updateTenant(deps, scoped, acme.id, { name: 'Renamed' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(deleteTenant(deps, scoped, acme.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('shows a tenant-scoped caller only its own tenant; others answer 404', async () => {
    const { deps } = tenancyFakes();
    const acme = await createTenant(deps, admin, { name: 'Acme', slug: 'acme' });
    const globex = await createTenant(deps, admin, { name: 'Globex', slug: 'globex' });
    const scoped = callerWith('user', acme.id);

    const listed = await listTenants(deps, scoped, { page: 1, limit: 50 });

    expect(listed.data.map((t) => t.id)).toEqual([acme.id]);
    expect(listed.meta.total).toBe(1);
    expect((await getTenant(deps, scoped, acme.short_id)).id).toBe(acme.id);
    await expect(getTenant(deps, scoped, globex.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(deleteTenant(deps, scoped, globex.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('lists by name for global callers, paginated', async () => {
    const { deps } = tenancyFakes();
    for (const name of ['beta', 'Alpha', 'gamma']) await createTenant(deps, admin, { name, slug: name.toLowerCase() });

    const first = await listTenants(deps, admin, { page: 1, limit: 2 });
    const second = await listTenants(deps, admin, { page: 2, limit: 2 });

    expect(first.data.map((t) => t.name)).toEqual(['Alpha', 'beta']);
    expect(second.data.map((t) => t.name)).toEqual(['gamma']);
    expect(first.meta).toMatchObject({ total: 3, total_pages: 2, has_next: true, has_prev: false });
  });

  it('updates name and slug, keeping omitted fields; a taken slug is a conflict', async () => {
    const { deps, clock } = tenancyFakes();
    const acme = await createTenant(deps, admin, { name: 'Acme', slug: 'acme' });
    await createTenant(deps, admin, { name: 'Globex', slug: 'globex' });
    clock.advance(1000);

    const renamed = await updateTenant(deps, admin, acme.id, { name: 'Acme Corp' });
    const moved = await updateTenant(deps, admin, acme.id, { slug: 'acme-corp' });

    expect(renamed).toMatchObject({ name: 'Acme Corp', slug: 'acme', updated_at: '2026-11-22T10:00:01.000Z' });
    expect(moved).toMatchObject({ name: 'Acme Corp', slug: 'acme-corp' });
    await expect(updateTenant(deps, admin, acme.id, { slug: 'globex' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(updateTenant(deps, admin, 'missing', { name: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses to delete a tenant that still has environments, and deletes it once they are gone', async () => {
    const { deps, tenants } = tenancyFakes();
    const acme = await createTenant(deps, admin, { name: 'Acme', slug: 'acme' });
    const production = await createEnvironment(deps, admin, { name: 'production', tenant_id: acme.id });

    await expect(deleteTenant(deps, admin, acme.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    await deleteEnvironment(deps, admin, production.id);
    await deleteTenant(deps, admin, acme.short_id);

    expect(await tenants.get(acme.id)).toBeUndefined();
  });
});
