import { describe, expect, it } from 'vitest';
import { createEnvironment, deleteEnvironment } from '../../../../domain/tenancy/environments.js';
import {
  createFreeze,
  deleteFreeze,
  getFreeze,
  listFreezes,
  updateFreeze,
} from '../../../../domain/tenancy/freezes.js';
import { createTenant, deleteTenant } from '../../../../domain/tenancy/tenants.js';
import { callerWith, tenancyFakes } from '../../../fakes/tenancy.js';

const admin = callerWith('admin', null, 'admin-user');

const setup = async () => {
  const fakes = tenancyFakes();
  const acme = await createTenant(fakes.deps, admin, { name: 'Acme', slug: 'acme' });
  const globex = await createTenant(fakes.deps, admin, { name: 'Globex', slug: 'globex' });
  const acmeProduction = await createEnvironment(fakes.deps, admin, { name: 'production', tenant_id: acme.id });
  const globexProduction = await createEnvironment(fakes.deps, admin, { name: 'production', tenant_id: globex.id });
  const shared = await createEnvironment(fakes.deps, admin, { name: 'shared' });
  const acmeShop = fakes.solutions.add({
    id: '5050a000-0000-4000-8000-000000000001',
    shortId: 'shop',
    name: 'Shop',
    tenantId: acme.id,
  });
  const globexShop = fakes.solutions.add({
    id: '5050a000-0000-4000-8000-000000000002',
    shortId: 'gshop',
    name: 'Shop',
    tenantId: globex.id,
  });
  return { ...fakes, acme, globex, acmeProduction, globexProduction, shared, acmeShop, globexShop };
};

const window = { start_time: '2026-12-20T00:00:00+01:00', end_time: '2027-01-02T00:00:00Z' };

describe('deployment freezes: create', () => {
  it('creates a global freeze without scope fields, with normalised UTC times and the creator', async () => {
    const { deps } = await setup();

    const freeze = await createFreeze(deps, admin, { name: 'Holidays', ...window });

    expect(freeze).toMatchObject({
      name: 'Holidays',
      reason: null,
      start_time: '2026-12-19T23:00:00.000Z',
      end_time: '2027-01-02T00:00:00.000Z',
      tenant_id: null,
      solution_id: null,
      environment_id: null,
      created_by: 'admin-user',
      active: false,
    });
  });

  it('resolves scope fields given by short id to UUIDs', async () => {
    const { deps, acme, acmeProduction, acmeShop } = await setup();

    const freeze = await createFreeze(deps, admin, {
      name: 'Release',
      reason: 'audit',
      ...window,
      tenant_id: acme.short_id,
      solution_id: 'shop',
      environment_id: acmeProduction.short_id,
    });

    expect(freeze).toMatchObject({
      reason: 'audit',
      tenant_id: acme.id,
      solution_id: acmeShop.id,
      environment_id: acmeProduction.id,
    });
  });

  it('refuses an end not after the start (400 on end_time)', async () => {
    const { deps } = await setup();

    await expect(
      createFreeze(deps, admin, { name: 'x', start_time: '2026-12-20T00:00:00Z', end_time: '2026-12-20T00:00:00Z' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'end_time' }] },
    });
    await expect(
      createFreeze(deps, admin, {
        name: 'x',
        start_time: '2026-12-20T00:00:00Z',
        end_time: '2026-12-20T00:59:59+01:00',
      }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'end_time', message: 'must be after start_time' }] },
    });
  });

  it('refuses times without an offset', async () => {
    const { deps } = await setup();

    await expect(
      createFreeze(deps, admin, { name: 'x', start_time: '2026-12-20T00:00:00', end_time: '2026-12-21T00:00:00Z' }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'start_time' }] },
    });
  });

  it.each([
    ['tenant_id', { tenant_id: 'ghost' }],
    ['solution_id', { solution_id: 'ghost' }],
    ['environment_id', { environment_id: 'ghost' }],
  ])('refuses a %s that does not exist (400 naming it)', async (field, scope) => {
    const { deps } = await setup();

    await expect(createFreeze(deps, admin, { name: 'x', ...window, ...scope })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field }] },
    });
  });

  it('names every bad field at once', async () => {
    const { deps } = await setup();

    const failure = createFreeze(deps, admin, {
      name: 'x',
      start_time: 'soon',
      end_time: '2026-12-21T00:00:00Z',
      solution_id: 'ghost',
      environment_id: 'ghost',
    });

    await expect(failure).rejects.toMatchObject({
      details: { fields: [{ field: 'start_time' }, { field: 'solution_id' }, { field: 'environment_id' }] },
    });
  });

  it("refuses a solution or environment of another tenant than the freeze's", async () => {
    const { deps, acme, globexProduction, globexShop } = await setup();

    await expect(
      createFreeze(deps, admin, { name: 'x', ...window, tenant_id: acme.id, environment_id: globexProduction.id }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'environment_id' }] },
    });
    await expect(
      createFreeze(deps, admin, { name: 'x', ...window, tenant_id: acme.id, solution_id: globexShop.id }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'solution_id' }] },
    });
  });

  it('accepts a global environment in a tenant freeze', async () => {
    const { deps, acme, shared } = await setup();

    await expect(
      createFreeze(deps, admin, { name: 'a', ...window, tenant_id: acme.id, environment_id: shared.id }),
    ).resolves.toMatchObject({ tenant_id: acme.id, environment_id: shared.id });
  });

  it('gives a freeze without tenant_id the tenant of its environment or solution, so other tenants never see it', async () => {
    const { deps, globex, globexProduction, globexShop, acmeProduction, references } = await setup();
    const before = references.of(globex.id);

    const byEnvironment = await createFreeze(deps, admin, {
      name: 'b',
      ...window,
      environment_id: globexProduction.id,
    });
    const bySolution = await createFreeze(deps, admin, {
      name: 'c',
      ...window,
      tenant_id: null,
      solution_id: globexShop.shortId,
    });

    expect(byEnvironment.tenant_id).toBe(globex.id);
    expect(bySolution.tenant_id).toBe(globex.id);
    expect(references.of(globex.id)).toBe(before + 2);
    await expect(
      createFreeze(deps, admin, {
        name: 'd',
        ...window,
        environment_id: acmeProduction.id,
        solution_id: globexShop.id,
      }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'solution_id', message: 'belongs to another tenant than the freeze' }] },
    });
  });

  it("keeps a tenant-scoped caller's freezes in its tenant: no global freeze, no other tenant, no invisible references", async () => {
    const { deps, acme, globex, globexProduction, globexShop, shared } = await setup();
    const scoped = callerWith('operator', acme.id, 'acme-operator');

    const created = await createFreeze(deps, scoped, { name: 'mine', ...window, environment_id: shared.id });

    expect(created).toMatchObject({ tenant_id: acme.id, created_by: 'acme-operator' });
    await expect(createFreeze(deps, scoped, { name: 'x', ...window, tenant_id: null })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(createFreeze(deps, scoped, { name: 'x', ...window, tenant_id: globex.id })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(
      createFreeze(deps, scoped, { name: 'x', ...window, environment_id: globexProduction.id }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'environment_id', message: `'${globexProduction.id}' does not exist.` }] },
    });
    await expect(
      createFreeze(deps, scoped, { name: 'x', ...window, solution_id: globexShop.id }),
    ).rejects.toMatchObject({ details: { fields: [{ field: 'solution_id' }] } });
  });

  it('references the tenant, so the tenant cannot be deleted while the freeze exists', async () => {
    const { deps, globex, globexProduction } = await setup();
    await deleteEnvironment(deps, admin, globexProduction.id);
    const freeze = await createFreeze(deps, admin, { name: 'x', ...window, tenant_id: globex.id });

    await expect(deleteTenant(deps, admin, globex.id)).rejects.toMatchObject({ code: 'CONFLICT' });
    await deleteFreeze(deps, admin, freeze.id);
    await expect(deleteTenant(deps, admin, globex.id)).resolves.toBeUndefined();
  });
});

describe('deployment freezes: read, list, update, delete', () => {
  it('lists newest first by start_time, with active, tenant_id and environment_id filters', async () => {
    const { deps, clock, acme, acmeProduction } = await setup();
    const running = await createFreeze(deps, admin, {
      name: 'running',
      start_time: '2026-11-22T09:00:00Z',
      end_time: '2026-11-22T11:00:00Z',
    });
    const later = await createFreeze(deps, admin, {
      name: 'later',
      start_time: '2026-12-01T00:00:00Z',
      end_time: '2026-12-02T00:00:00Z',
      tenant_id: acme.id,
    });
    const past = await createFreeze(deps, admin, {
      name: 'past',
      start_time: '2026-11-01T00:00:00Z',
      end_time: '2026-11-02T00:00:00Z',
      environment_id: acmeProduction.id,
    });

    const all = await listFreezes(deps, admin, { page: 1, limit: 50 });
    const active = await listFreezes(deps, admin, { page: 1, limit: 50, active: true });
    const inactive = await listFreezes(deps, admin, { page: 1, limit: 50, active: false });
    const ofAcme = await listFreezes(deps, admin, { page: 1, limit: 50, tenant_id: acme.id });
    const ofProduction = await listFreezes(deps, admin, { page: 1, limit: 50, environment_id: acmeProduction.id });
    clock.advance(2 * 3600_000);
    const activeLater = await listFreezes(deps, admin, { page: 1, limit: 50, active: true });

    expect(all.data.map((f) => f.name)).toEqual(['later', 'running', 'past']);
    expect(active.data.map((f) => f.id)).toEqual([running.id]);
    expect(active.data[0]?.active).toBe(true);
    expect(inactive.data.map((f) => f.id)).toEqual([later.id, past.id]);
    expect(ofAcme.data.map((f) => f.id)).toEqual([later.id, past.id]); // past names an environment of acme
    expect(ofProduction.data.map((f) => f.id)).toEqual([past.id]);
    expect(activeLater.data).toEqual([]);
  });

  it('shows a tenant-scoped caller global freezes and its own, not other tenants’; global ones are read-only', async () => {
    const { deps, acme, globex } = await setup();
    const global = await createFreeze(deps, admin, { name: 'global', ...window });
    const mine = await createFreeze(deps, admin, { name: 'mine', ...window, tenant_id: acme.id });
    const theirs = await createFreeze(deps, admin, { name: 'theirs', ...window, tenant_id: globex.id });
    const scoped = callerWith('admin', acme.id);

    const listed = await listFreezes(deps, scoped, { page: 1, limit: 50 });

    expect(listed.data.map((f) => f.id).sort()).toEqual([global.id, mine.id].sort());
    expect((await getFreeze(deps, scoped, global.short_id)).id).toBe(global.id);
    await expect(getFreeze(deps, scoped, theirs.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(updateFreeze(deps, scoped, global.id, { name: 'x' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(deleteFreeze(deps, scoped, global.id)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(deleteFreeze(deps, scoped, theirs.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(deleteFreeze(deps, scoped, mine.id)).resolves.toBeUndefined();
  });

  it('updates: omitted fields kept, null clears, the merged window is checked', async () => {
    const { deps, clock, acme, acmeProduction } = await setup();
    const freeze = await createFreeze(deps, admin, {
      name: 'x',
      reason: 'why',
      ...window,
      tenant_id: acme.id,
      environment_id: acmeProduction.id,
    });
    clock.advance(1000);

    const renamed = await updateFreeze(deps, admin, freeze.id, { name: 'y', reason: null });
    const widened = await updateFreeze(deps, admin, freeze.short_id, { environment_id: null });

    expect(renamed).toMatchObject({
      name: 'y',
      reason: null,
      start_time: freeze.start_time,
      environment_id: acmeProduction.id,
      updated_at: '2026-11-22T10:00:01.000Z',
    });
    expect(widened).toMatchObject({ name: 'y', tenant_id: acme.id, environment_id: null });
    await expect(updateFreeze(deps, admin, freeze.id, { end_time: '2026-12-01T00:00:00Z' })).rejects.toMatchObject({
      details: { fields: [{ field: 'end_time' }] },
    });
    await expect(updateFreeze(deps, admin, 'missing', { name: 'z' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('moves references when the scope changes', async () => {
    const { deps, acme, globex, acmeProduction, references } = await setup();
    const freeze = await createFreeze(deps, admin, {
      name: 'x',
      ...window,
      tenant_id: acme.id,
      environment_id: acmeProduction.id,
    });
    const before = {
      acme: references.of(acme.id),
      globex: references.of(globex.id),
      env: references.of(acmeProduction.id),
    };

    await updateFreeze(deps, admin, freeze.id, { tenant_id: globex.id, environment_id: null });

    expect(references.of(acme.id)).toBe(before.acme - 1);
    expect(references.of(globex.id)).toBe(before.globex + 1);
    expect(references.of(acmeProduction.id)).toBe(before.env - 1);
  });

  it('checks the merged scope: a new tenant must fit the kept environment', async () => {
    const { deps, acme, globex, acmeProduction } = await setup();
    const freeze = await createFreeze(deps, admin, {
      name: 'x',
      ...window,
      tenant_id: acme.id,
      environment_id: acmeProduction.id,
    });

    await expect(updateFreeze(deps, admin, freeze.id, { tenant_id: globex.id })).rejects.toMatchObject({
      details: { fields: [{ field: 'environment_id' }] },
    });
  });

  it('keeps a tenant-scoped caller from moving its freeze to another tenant or to global', async () => {
    const { deps, acme, globex } = await setup();
    const scoped = callerWith('admin', acme.id);
    const freeze = await createFreeze(deps, scoped, { name: 'x', ...window });

    await expect(updateFreeze(deps, scoped, freeze.id, { tenant_id: globex.id })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(updateFreeze(deps, scoped, freeze.id, { tenant_id: null })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
