// DynamoActionRepository against DynamoDB Local: one partition per action, slug claims per scope, tenant
// references, revision-conditioned version changes, and deletes that wait for refCount 0.
import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConcurrentChangeError } from '../../../../domain/catalog/errors.js';
import type { Action, ActionVersion } from '../../../../domain/catalog/types.js';
import { ConflictError, ValidationError } from '../../../../domain/errors.js';
import { DynamoActionRepository } from '../../../../infra/dynamodb/action-repository.js';
import { keys } from '../../../../infra/dynamodb/keys.js';
import { DynamoTenantRepository } from '../../../../infra/dynamodb/tenant-repository.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('actions', { marshallOptions: { removeUndefinedValues: true } });
const actions = new DynamoActionRepository(db, table);
const tenants = new DynamoTenantRepository(db, table);

let counter = 0;
const anAction = (overrides: Partial<Action> = {}): Action => {
  counter += 1;
  const at = `2026-01-01T00:00:${String(counter).padStart(2, '0')}.000Z`;
  return {
    id: randomUUID(),
    shortId: `a${counter}`,
    slug: `action-${counter}`,
    name: `Action ${counter}`,
    description: null,
    tenantId: null,
    latestVersion: '1.0.0',
    versionCount: 1,
    revision: 1,
    refCount: 0,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
};
const aVersion = (action: Action, version: string, overrides: Partial<ActionVersion> = {}): ActionVersion => ({
  id: randomUUID(),
  actionId: action.id,
  version,
  script: `echo ${version}`,
  interpreter: 'sh',
  rollbackScript: null,
  timeoutSeconds: null,
  variables: [{ name: 'PORT', description: null, required: true, default: '80', secret: false }],
  changelog: null,
  createdAt: action.createdAt,
  createdBy: 'user-1',
  ...overrides,
});
/** `action` after its versions become `latest` .. and one more change. */
const bumped = (action: Action, latestVersion: string, versionCount: number): Action => ({
  ...action,
  latestVersion,
  versionCount,
  revision: action.revision + 1,
});

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoActionRepository', () => {
  it('creates an action with its first version, found by id or short id and listed', async () => {
    // Prepare
    const action = anAction({ description: 'restarts' });
    const first = aVersion(action, '1.0.0', { rollbackScript: 'undo', timeoutSeconds: 30 });
    // Act
    await actions.create(action, first);
    // Assess
    expect(await actions.find(action.id)).toEqual({ action, versions: [first] });
    expect((await actions.find(action.shortId))?.action.id).toBe(action.id);
    expect(await actions.find(randomUUID())).toBeUndefined();
    expect(await actions.find('nope')).toBeUndefined();
    expect((await actions.listAll()).find((a) => a.id === action.id)).toEqual(action);
  });

  it('claims the slug per scope: 409 in the same scope, fine in a tenant; a missing tenant is 400', async () => {
    const tenant = {
      id: randomUUID(),
      shortId: 'tenant-x',
      name: 'X',
      slug: `x-${counter}`,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    await tenants.create(tenant);
    const global = anAction({ slug: 'shared-slug' });
    await actions.create(global, aVersion(global, '1.0.0'));
    const again = anAction({ slug: 'Shared-Slug' });
    const conflict = await actions.create(again, aVersion(again, '1.0.0')).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect((conflict as ConflictError).details).toEqual({ field: 'slug' });
    expect(await actions.find(again.id)).toBeUndefined(); // nothing of it was written

    const ofTenant = anAction({ slug: 'shared-slug', tenantId: tenant.id });
    await actions.create(ofTenant, aVersion(ofTenant, '1.0.0'));
    await expect(tenants.delete(tenant)).rejects.toBeInstanceOf(ConflictError); // the action references it
    const orphan = anAction({ tenantId: randomUUID() });
    const missing = await actions.create(orphan, aVersion(orphan, '1.0.0')).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).fields[0]?.field).toBe('tenant_id');

    await actions.delete((await actions.find(ofTenant.id))!.action, [aVersion(ofTenant, '1.0.0')]);
    await tenants.delete(tenant); // released
  });

  it('changes versions only from the revision read: exactly one of two racing writers wins', async () => {
    // Prepare
    const action = anAction();
    await actions.create(action, aVersion(action, '1.0.0'));
    // Act
    const results = await Promise.allSettled([
      actions.changeVersions(action, bumped(action, '1.1.0', 2), {
        kind: 'create',
        version: aVersion(action, '1.1.0'),
      }),
      actions.changeVersions(action, bumped(action, '1.2.0', 2), {
        kind: 'create',
        version: aVersion(action, '1.2.0'),
      }),
    ]);
    // Assess
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(ConcurrentChangeError);
    const found = await actions.find(action.id);
    expect(found?.versions).toHaveLength(2);
    expect(found?.action.revision).toBe(2);
  });

  it('renumbers, replaces and deletes versions with the derived fields, keeping refCount', async () => {
    const action = anAction();
    const v1 = aVersion(action, '1.0.0');
    await actions.create(action, v1);
    const v2 = aVersion(action, '1.2.0');
    await actions.changeVersions(action, bumped(action, '1.2.0', 2), { kind: 'create', version: v2 });
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: keys.action(action.id),
        UpdateExpression: 'ADD refCount :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );

    let current = (await actions.find(action.id))!.action;
    await actions.changeVersions(current, bumped(current, '2.0.0', 2), {
      kind: 'replace',
      previous: v1,
      next: { ...v1, version: '2.0.0', script: 'new' },
    });
    current = (await actions.find(action.id))!.action;
    await actions.changeVersions(current, bumped(current, '2.0.0', 2), {
      kind: 'replace',
      previous: { ...v1, version: '2.0.0' },
      next: { ...v1, version: '2.0.0', script: 'newer' },
    });
    current = (await actions.find(action.id))!.action;
    await actions.changeVersions(current, bumped(current, '2.0.0', 1), { kind: 'delete', version: v2 });

    const found = await actions.find(action.id);
    expect(found?.versions.map((v) => [v.version, v.script, v.id])).toEqual([['2.0.0', 'newer', v1.id]]);
    expect(found?.action).toMatchObject({ latestVersion: '2.0.0', versionCount: 1, revision: 5, refCount: 1 });
    // A rename touches name and description only.
    const renamed = await actions.rename(found!.action, {
      name: 'Renamed',
      description: 'd',
      updatedAt: '2026-02-01T00:00:00.000Z',
    });
    expect(renamed).toMatchObject({
      name: 'Renamed',
      description: 'd',
      refCount: 1,
      revision: 5,
      latestVersion: '2.0.0',
    });
    // refCount 1: the delete is refused.
    await expect(actions.delete(renamed, found!.versions)).rejects.toBeInstanceOf(ConcurrentChangeError);
  });

  it('deletes an action with more versions than one transaction holds, its slug claim and alias', async () => {
    // Prepare
    let action = anAction({ slug: 'many-versions' });
    await actions.create(action, aVersion(action, '0.0.0'));
    for (let n = 1; n <= 110; n += 1) {
      const next = bumped(action, `0.${n}.0`, n + 1);
      await actions.changeVersions(action, next, { kind: 'create', version: aVersion(action, `0.${n}.0`) });
      action = next;
    }
    const found = await actions.find(action.id);
    expect(found?.versions).toHaveLength(111);
    expect(found?.versions[0]?.version).toBe('0.110.0');
    // Act
    await actions.delete(found!.action, found!.versions);
    // Assess
    expect(await actions.find(action.id)).toBeUndefined();
    const left = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.action(action.id).pk },
      }),
    );
    expect(left.Items).toEqual([]);
    expect(
      (await db.send(new GetCommand({ TableName: table, Key: keys.actionSlug(null, 'many-versions') }))).Item,
    ).toBeUndefined();
    expect(
      (await db.send(new GetCommand({ TableName: table, Key: keys.shortId('action', action.shortId) }))).Item,
    ).toBeUndefined();
  });

  it('refuses a delete from a stale revision', async () => {
    const action = anAction();
    await actions.create(action, aVersion(action, '1.0.0'));
    await actions.changeVersions(action, bumped(action, '1.1.0', 2), {
      kind: 'create',
      version: aVersion(action, '1.1.0'),
    });
    await expect(actions.delete(action, [aVersion(action, '1.0.0')])).rejects.toBeInstanceOf(ConcurrentChangeError);
    expect(await actions.find(action.id)).toBeDefined();
  });
});
