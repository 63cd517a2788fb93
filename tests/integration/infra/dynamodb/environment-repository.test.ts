import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment, Tenant } from '../../../../domain/tenancy/types.js';
import { DynamoEnvironmentRepository } from '../../../../infra/dynamodb/environment-repository.js';
import { DynamoFreezeRepository } from '../../../../infra/dynamodb/freeze-repository.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoTenantRepository } from '../../../../infra/dynamodb/tenant-repository.js';
import { aFreeze } from '../../../fakes/tenancy.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db, refCountOf } = serviceTableFixture('environments');
const tenants = new DynamoTenantRepository(db, table);
const environments = new DynamoEnvironmentRepository(db, table);
const freezes = new DynamoFreezeRepository(db, table);

let counter = 0;
const next = () => (counter += 1);
const aTenant = (): Tenant => {
  const n = next();
  return {
    id: randomUUID(),
    shortId: `t${n}`,
    name: `Tenant ${n}`,
    slug: `tenant-${n}`,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
};
const anEnvironment = (overrides: Partial<Environment> = {}): Environment => {
  const n = next();
  return {
    id: randomUUID(),
    shortId: `e${n}`,
    name: `env-${n}`,
    tenantId: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
};

let tenant: Tenant;
let otherTenant: Tenant;

beforeAll(async () => {
  await createServiceTable(client, table);
  tenant = aTenant();
  otherTenant = aTenant();
  await tenants.create(tenant);
  await tenants.create(otherTenant);
});

describe('DynamoEnvironmentRepository', () => {
  it('creates an environment readable by id, short id and the lookup port, and references its tenant', async () => {
    // Prepare
    const environment = anEnvironment({ tenantId: tenant.id });
    const before = Number(await refCountOf(keys.tenant(tenant.id)));
    // Act
    await environments.create(environment);
    // Assess
    expect(await environments.get(environment.id)).toEqual(environment);
    expect(await environments.get(environment.shortId)).toEqual(environment);
    expect(await environments.findEnvironment(environment.shortId)).toEqual({
      id: environment.id,
      shortId: environment.shortId,
      name: environment.name,
      tenantId: tenant.id,
    });
    expect((await environments.listAll()).map((e) => e.id)).toContain(environment.id);
    expect(await refCountOf(keys.tenant(tenant.id))).toBe(before + 1);
  });

  it('refuses a tenant that does not exist, with a 400 on tenant_id, and writes nothing', async () => {
    const environment = anEnvironment({ tenantId: randomUUID() });

    await expect(environments.create(environment)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field: 'tenant_id' }] },
    });
    expect(await environments.get(environment.id)).toBeUndefined();
    await expect(environments.create({ ...environment, tenantId: null })).resolves.toBeUndefined();
  });

  it('keeps names unique within a tenant (case-insensitive) and among global ones, not across scopes', async () => {
    // Prepare
    await environments.create(anEnvironment({ name: 'production', tenantId: tenant.id }));
    await environments.create(anEnvironment({ name: 'production' }));
    // Act
    const results = await Promise.allSettled([
      environments.create(anEnvironment({ name: 'PRODUCTION', tenantId: tenant.id })),
      environments.create(anEnvironment({ name: 'Production' })),
      environments.create(anEnvironment({ name: 'production', tenantId: otherTenant.id })),
    ]);
    // Assess
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({
      code: 'CONFLICT',
      details: { field: 'name' },
    });
  });

  it('moves the name claim on rename and keeps the reference count', async () => {
    // Prepare
    const environment = anEnvironment({ name: 'blue', tenantId: tenant.id });
    await environments.create(environment);
    await freezes.create(aFreeze({ id: randomUUID(), shortId: `fz${next()}`, environmentId: environment.id }));
    const renamed = { ...environment, name: 'green', updatedAt: '2026-02-01T00:00:00.000Z' };
    // Act
    await environments.update(environment, renamed);
    // Assess
    expect(await environments.get(environment.id)).toEqual(renamed);
    expect(await refCountOf(keys.environment(environment.id))).toBe(1);
    await expect(environments.create(anEnvironment({ name: 'blue', tenantId: tenant.id }))).resolves.toBeUndefined();
    await expect(environments.create(anEnvironment({ name: 'green', tenantId: tenant.id }))).rejects.toMatchObject({
      code: 'CONFLICT',
    });
  });

  it('refuses an update from a stale read', async () => {
    const environment = anEnvironment();
    await environments.create(environment);
    await environments.update(environment, {
      ...environment,
      name: `${environment.name}-a`,
      updatedAt: '2026-02-01T00:00:00.000Z',
    });

    await expect(
      environments.update(environment, {
        ...environment,
        name: `${environment.name}-b`,
        updatedAt: '2026-02-02T00:00:00.000Z',
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('refuses to delete an environment a freeze names; deletes it, its claim and alias and releases the tenant once free', async () => {
    // Prepare
    const scopedTenant = aTenant();
    await tenants.create(scopedTenant);
    const environment = anEnvironment({ name: 'doomed', tenantId: scopedTenant.id });
    await environments.create(environment);
    const freeze = aFreeze({ id: randomUUID(), shortId: `fz${next()}`, environmentId: environment.id });
    await freezes.create(freeze);
    // Act / Assess
    await expect(environments.delete(environment)).rejects.toMatchObject({
      code: 'CONFLICT',
      details: { references: 1 },
    });
    await freezes.delete(freeze);
    await environments.delete(environment);
    expect(await environments.get(environment.shortId)).toBeUndefined();
    expect(await refCountOf(keys.tenant(scopedTenant.id))).toBe(0);
    await expect(
      environments.create(anEnvironment({ name: 'doomed', tenantId: scopedTenant.id })),
    ).resolves.toBeUndefined();
    await expect(environments.delete(environment)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('cannot reference a tenant deleted meanwhile', async () => {
    // Prepare: the tenant is deleted between the use case's check and the write
    const gone = aTenant();
    await tenants.create(gone);
    await tenants.delete(gone);
    // Act / Assess
    await expect(environments.create(anEnvironment({ tenantId: gone.id }))).rejects.toMatchObject({
      details: { fields: [{ field: 'tenant_id' }] },
    });
    expect(await tenants.get(gone.id)).toBeUndefined();
  });
});
