import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../../../domain/tenancy/types.js';
import { DynamoEnvironmentRepository } from '../../../../infra/dynamodb/environment-repository.js';
import { DynamoTenantRepository } from '../../../../infra/dynamodb/tenant-repository.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('tenants');
const tenants = new DynamoTenantRepository(db, table);
const environments = new DynamoEnvironmentRepository(db, table);

let counter = 0;
const aTenant = (overrides: Partial<Tenant> = {}): Tenant => {
  counter += 1;
  return {
    id: randomUUID(),
    shortId: `t${counter}`,
    name: `Tenant ${counter}`,
    slug: `tenant-${counter}`,
    createdAt: `2026-01-01T00:00:${String(counter).padStart(2, '0')}.000Z`,
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
};

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoTenantRepository', () => {
  it('creates a tenant readable by id, short id and the lookup port, and lists it', async () => {
    // Prepare
    const tenant = aTenant();
    // Act
    await tenants.create(tenant);
    // Assess
    expect(await tenants.get(tenant.id)).toEqual(tenant);
    expect(await tenants.get(tenant.shortId)).toEqual(tenant);
    expect(await tenants.findTenant(tenant.shortId)).toEqual({
      id: tenant.id,
      shortId: tenant.shortId,
      name: tenant.name,
      slug: tenant.slug,
    });
    expect((await tenants.listAll()).map((t) => t.id)).toContain(tenant.id);
  });

  it('answers undefined for an unknown id or short id', async () => {
    expect(await tenants.get(randomUUID())).toBeUndefined();
    expect(await tenants.findTenant('nope')).toBeUndefined();
  });

  it('lets exactly one of several concurrent creates with one slug succeed', async () => {
    // Prepare
    const contenders = Array.from({ length: 5 }, () => aTenant({ slug: 'contested' }));
    // Act
    const results = await Promise.allSettled(contenders.map((t) => tenants.create(t)));
    // Assess
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected.map((r) => (r.reason as { code: string; details: unknown }).code)).toEqual(
      Array(4).fill('CONFLICT'),
    );
    expect((rejected[0]?.reason as { details: unknown }).details).toEqual({ field: 'slug' });
  });

  it('treats slugs case-insensitively', async () => {
    await tenants.create(aTenant({ slug: 'casey' }));
    await expect(tenants.create(aTenant({ slug: 'CASEY' }))).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('moves the slug claim on update: the old slug is free again, a taken one is refused', async () => {
    // Prepare
    const tenant = aTenant({ slug: 'before' });
    const other = aTenant({ slug: 'occupied' });
    await tenants.create(tenant);
    await tenants.create(other);
    const next = { ...tenant, name: 'Renamed', slug: 'after', updatedAt: '2026-02-01T00:00:00.000Z' };
    // Act
    await tenants.update(tenant, next);
    // Assess
    expect(await tenants.get(tenant.id)).toEqual(next);
    await expect(tenants.create(aTenant({ slug: 'before' }))).resolves.toBeUndefined();
    await expect(tenants.create(aTenant({ slug: 'after' }))).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(
      tenants.update(next, { ...next, slug: 'occupied', updatedAt: '2026-03-01T00:00:00.000Z' }),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { field: 'slug' } });
    expect((await tenants.get(tenant.id))?.slug).toBe('after');
  });

  it('refuses an update from a stale read', async () => {
    const tenant = aTenant();
    await tenants.create(tenant);
    await tenants.update(tenant, { ...tenant, name: 'First', updatedAt: '2026-02-01T00:00:00.000Z' });

    await expect(
      tenants.update(tenant, { ...tenant, name: 'Second', updatedAt: '2026-02-02T00:00:00.000Z' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await tenants.get(tenant.id))?.name).toBe('First');
  });

  it('refuses to delete a tenant an environment references, even after a tenant update, and deletes it once released', async () => {
    // Prepare
    const tenant = aTenant();
    await tenants.create(tenant);
    const environment = {
      id: randomUUID(),
      shortId: `e${counter}`,
      name: 'production',
      tenantId: tenant.id,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    await environments.create(environment);
    const renamed = { ...tenant, name: 'Renamed', updatedAt: '2026-02-01T00:00:00.000Z' };
    await tenants.update(tenant, renamed);
    // Act / Assess
    await expect(tenants.delete(renamed)).rejects.toMatchObject({ code: 'CONFLICT', details: { references: 1 } });
    await environments.delete(environment);
    await tenants.delete(renamed);
    expect(await tenants.get(tenant.id)).toBeUndefined();
    expect(await tenants.get(tenant.shortId)).toBeUndefined();
    await expect(tenants.create(aTenant({ slug: tenant.slug }))).resolves.toBeUndefined();
  });

  it('answers NotFound when deleting a tenant that is gone', async () => {
    const tenant = aTenant();
    await tenants.create(tenant);
    await tenants.delete(tenant);

    await expect(tenants.delete(tenant)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
