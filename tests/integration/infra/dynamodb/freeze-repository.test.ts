import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment, Freeze, Tenant } from '../../../../domain/tenancy/types.js';
import { DynamoEnvironmentRepository } from '../../../../infra/dynamodb/environment-repository.js';
import { DynamoFreezeRepository } from '../../../../infra/dynamodb/freeze-repository.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoTenantRepository } from '../../../../infra/dynamodb/tenant-repository.js';
import { aFreeze } from '../../../fakes/tenancy.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db, refCountOf } = serviceTableFixture('freezes');
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
const anEnvironment = (tenantId: string | null): Environment => {
  const n = next();
  return {
    id: randomUUID(),
    shortId: `e${n}`,
    name: `env-${n}`,
    tenantId,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
};
const freeze = (overrides: Partial<Freeze> = {}): Freeze =>
  aFreeze({
    id: randomUUID(),
    shortId: `fz${next()}`,
    createdAt: `2026-11-01T00:00:${String(counter % 60).padStart(2, '0')}.000Z`,
    ...overrides,
  });

let tenantA: Tenant;
let tenantB: Tenant;
let environment: Environment;

beforeAll(async () => {
  await createServiceTable(client, table);
  tenantA = aTenant();
  tenantB = aTenant();
  await tenants.create(tenantA);
  await tenants.create(tenantB);
  environment = anEnvironment(tenantA.id);
  await environments.create(environment);
});

describe('DynamoFreezeRepository', () => {
  it('creates a freeze readable by id and short id, with every field kept', async () => {
    const created = freeze({
      reason: 'release',
      tenantId: tenantA.id,
      solutionId: randomUUID(),
      environmentId: environment.id,
    });

    await freezes.create(created);

    expect(await freezes.get(created.id)).toEqual(created);
    expect(await freezes.get(created.shortId)).toEqual(created);
    expect(await freezes.get('missing')).toBeUndefined();
  });

  it('lists all freezes, and those ending after a time (end exclusive)', async () => {
    // Prepare
    const ended = freeze({ startTime: '2026-01-01T00:00:00.000Z', endTime: '2026-01-02T00:00:00.000Z' });
    const endsAtBoundary = freeze({ startTime: '2026-01-01T00:00:00.000Z', endTime: '2026-06-01T00:00:00.000Z' });
    const running = freeze({ startTime: '2026-05-01T00:00:00.000Z', endTime: '2026-07-01T00:00:00.000Z' });
    const future = freeze({ startTime: '2026-08-01T00:00:00.000Z', endTime: '2026-09-01T00:00:00.000Z' });
    for (const f of [ended, endsAtBoundary, running, future]) await freezes.create(f);
    // Act
    const all = (await freezes.listAll()).map((f) => f.id);
    const endingAfter = (await freezes.listEndingAfter(new Date('2026-06-01T00:00:00.000Z'))).map((f) => f.id);
    // Assess
    expect(all).toEqual(expect.arrayContaining([ended.id, endsAtBoundary.id, running.id, future.id]));
    expect(endingAfter).toEqual(expect.arrayContaining([running.id, future.id]));
    expect(endingAfter).not.toContain(ended.id);
    expect(endingAfter).not.toContain(endsAtBoundary.id);
  });

  it('references its tenant and environment, and releases them on delete', async () => {
    // Prepare
    const before = {
      tenant: Number(await refCountOf(keys.tenant(tenantA.id))),
      env: Number(await refCountOf(keys.environment(environment.id))),
    };
    const scoped = freeze({ tenantId: tenantA.id, environmentId: environment.id });
    // Act
    await freezes.create(scoped);
    const during = {
      tenant: await refCountOf(keys.tenant(tenantA.id)),
      env: await refCountOf(keys.environment(environment.id)),
    };
    await freezes.delete(scoped);
    // Assess
    expect(during).toEqual({ tenant: before.tenant + 1, env: before.env + 1 });
    expect(await refCountOf(keys.tenant(tenantA.id))).toBe(before.tenant);
    expect(await refCountOf(keys.environment(environment.id))).toBe(before.env);
    expect(await freezes.get(scoped.shortId)).toBeUndefined();
    await expect(freezes.delete(scoped)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it.each([
    ['tenant_id', { tenantId: '00000000-0000-4000-8000-000000000000' }],
    ['environment_id', { environmentId: '00000000-0000-4000-8000-000000000000' }],
  ] as const)('refuses a %s that does not exist and writes nothing', async (field, scope) => {
    const orphan = freeze(scope);

    await expect(freezes.create(orphan)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ field }] },
    });
    expect(await freezes.get(orphan.id)).toBeUndefined();
  });

  it('moves references when the scope changes on update', async () => {
    // Prepare
    const movable = freeze({ tenantId: tenantA.id, environmentId: environment.id });
    await freezes.create(movable);
    const before = {
      a: Number(await refCountOf(keys.tenant(tenantA.id))),
      b: Number(await refCountOf(keys.tenant(tenantB.id))),
      env: Number(await refCountOf(keys.environment(environment.id))),
    };
    const moved = { ...movable, tenantId: tenantB.id, environmentId: null, updatedAt: '2026-11-02T00:00:00.000Z' };
    // Act
    await freezes.update(movable, moved);
    // Assess
    expect(await freezes.get(movable.id)).toEqual(moved);
    expect(await refCountOf(keys.tenant(tenantA.id))).toBe(before.a - 1);
    expect(await refCountOf(keys.tenant(tenantB.id))).toBe(before.b + 1);
    expect(await refCountOf(keys.environment(environment.id))).toBe(before.env - 1);
  });

  it('refuses an update from a stale read, or to a tenant that does not exist', async () => {
    const stale = freeze();
    await freezes.create(stale);
    await freezes.update(stale, { ...stale, name: 'first', updatedAt: '2026-11-02T00:00:00.000Z' });

    await expect(
      freezes.update(stale, { ...stale, name: 'second', updatedAt: '2026-11-03T00:00:00.000Z' }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    const current = (await freezes.get(stale.id))!;
    await expect(
      freezes.update(current, { ...current, tenantId: randomUUID(), updatedAt: '2026-11-04T00:00:00.000Z' }),
    ).rejects.toMatchObject({
      details: { fields: [{ field: 'tenant_id' }] },
    });
    expect((await freezes.get(stale.id))?.name).toBe('first');
  });
});
