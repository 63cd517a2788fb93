// Tenants, environments and deployment freezes over HTTP: every status of each resource, short ids, tenant
// isolation for a tenant-scoped administrator, and global and scoped freezes.
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('tenancy');

const api = apiClient(() => e2e.stack.baseUrl);
/** An API call: paths relative to /api/v1, a bearer token, a JSON body. */
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });
const login = async (email: string, password: string): Promise<string> => (await api.login({ email, password })).token;
const fields = (reply: { json: { error: { details?: { fields?: { field: string }[] } } } }) =>
  (reply.json.error.details?.fields ?? []).map((f) => f.field);

const hoursFromNow = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

describe('authentication and permissions', () => {
  it('answers 401 without credentials and 403 without the permission', async () => {
    // Prepare: the `user` role reads environments and freezes, but has no tenants permission and creates nothing here
    await createUser('uma@example.com', 'uma-password', ['user']);
    const uma = await login('uma@example.com', 'uma-password');
    // Act + Assess
    for (const path of ['/tenants', '/environments', '/deployment-freezes']) {
      const reply = await call('GET', path, undefined);
      expect([path, reply.status]).toEqual([path, 401]);
    }
    expect((await call('GET', '/tenants', uma)).json.error.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect((await call('POST', '/tenants', uma, { name: 'X', slug: 'x' })).status).toBe(403);
    expect((await call('POST', '/environments', uma, { name: 'x' })).status).toBe(403);
    expect(
      (
        await call('POST', '/deployment-freezes', uma, {
          name: 'x',
          start_time: hoursFromNow(0),
          end_time: hoursFromNow(1),
        })
      ).status,
    ).toBe(403);
    expect((await call('GET', '/environments', uma)).status).toBe(200);
    expect((await call('GET', '/deployment-freezes', uma)).status).toBe(200);
  });
});

describe('tenants', () => {
  it('creates, reads by id and short id, lists, updates and deletes a tenant', async () => {
    // Create
    const created = await call('POST', '/tenants', e2e.admin, { name: 'Acme', slug: 'acme' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'Acme',
      slug: 'acme',
      id: expect.any(String),
      short_id: expect.any(String),
      created_at: expect.any(String),
    });
    // Read
    expect((await call('GET', `/tenants/${created.json.id}`, e2e.admin)).json).toEqual(created.json);
    expect((await call('GET', `/tenants/${created.json.short_id}`, e2e.admin)).json.id).toBe(created.json.id);
    const list = await call('GET', '/tenants?limit=1', e2e.admin);
    expect(list.status).toBe(200);
    expect(list.json.meta).toMatchObject({ page: 1, limit: 1 });
    expect(list.json.data).toHaveLength(1);
    // Update: rename, then move the slug; the old slug is free again
    const renamed = await call('PUT', `/tenants/${created.json.short_id}`, e2e.admin, {
      name: 'Acme Corp',
      slug: 'acme-corp',
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ id: created.json.id, name: 'Acme Corp', slug: 'acme-corp' });
    const reuse = await call('POST', '/tenants', e2e.admin, { name: 'New Acme', slug: 'acme' });
    expect(reuse.status).toBe(201);
    // Delete
    expect((await call('DELETE', `/tenants/${created.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('GET', `/tenants/${created.json.id}`, e2e.admin)).status).toBe(404);
    expect((await call('DELETE', `/tenants/${created.json.id}`, e2e.admin)).status).toBe(404);
    expect((await call('DELETE', `/tenants/${reuse.json.id}`, e2e.admin)).status).toBe(204);
  });

  it('answers 409 for a taken slug, 400 for bad input, 404 for unknown tenants', async () => {
    const first = await call('POST', '/tenants', e2e.admin, { name: 'Initech', slug: 'initech' });
    const other = await call('POST', '/tenants', e2e.admin, { name: 'Hooli', slug: 'hooli' });
    expect(first.status).toBe(201);

    const taken = await call('POST', '/tenants', e2e.admin, { name: 'Initech 2', slug: 'initech' });
    expect([taken.status, taken.json.error.code]).toEqual([409, 'CONFLICT']);
    expect((await call('PUT', `/tenants/${other.json.id}`, e2e.admin, { slug: 'initech' })).status).toBe(409);
    const bad = await call('POST', '/tenants', e2e.admin, { name: '', slug: 'Not A Slug' });
    expect([bad.status, bad.json.error.code, fields(bad).sort()]).toEqual([400, 'VALIDATION_ERROR', ['name', 'slug']]);
    const missing = await call('POST', '/tenants', e2e.admin, { name: 'No slug' });
    expect([missing.status, missing.json.error.code, fields(missing)]).toEqual([400, 'MISSING_FIELD', ['slug']]);
    expect((await call('PUT', `/tenants/${first.json.id}`, e2e.admin, { slug: '-bad' })).status).toBe(400);
    expect((await call('GET', '/tenants/nope', e2e.admin)).status).toBe(404);
    expect((await call('PUT', '/tenants/nope', e2e.admin, { name: 'x' })).status).toBe(404);
  });

  it('refuses to delete a tenant that still has an environment (409)', async () => {
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Sticky', slug: 'sticky' });
    const environment = await call('POST', '/environments', e2e.admin, {
      name: 'production',
      tenant_id: tenant.json.short_id,
    });
    expect(environment.status).toBe(201);

    const refused = await call('DELETE', `/tenants/${tenant.json.id}`, e2e.admin);
    expect([refused.status, refused.json.error.code]).toEqual([409, 'CONFLICT']);

    expect((await call('DELETE', `/environments/${environment.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('DELETE', `/tenants/${tenant.json.id}`, e2e.admin)).status).toBe(204);
  });

  it('refuses to delete a tenant that still has users (409), and follows a user moved to another tenant', async () => {
    const first = await call('POST', '/tenants', e2e.admin, { name: 'Peopled', slug: 'peopled' });
    const second = await call('POST', '/tenants', e2e.admin, { name: 'Second', slug: 'second' });
    const userId = await createUser('moving@example.com', 'moving-password', ['user'], first.json.id);

    const refused = await call('DELETE', `/tenants/${first.json.id}`, e2e.admin);
    expect([refused.status, refused.json.error.code, refused.json.error.message]).toEqual([
      409,
      'CONFLICT',
      expect.stringContaining('users'),
    ]);

    expect((await call('PATCH', `/admin/users/${userId}`, e2e.admin, { tenant_id: second.json.id })).status).toBe(200);
    expect((await call('DELETE', `/tenants/${first.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('DELETE', `/tenants/${second.json.id}`, e2e.admin)).status).toBe(409);
    expect((await call('DELETE', `/admin/users/${userId}`, e2e.admin)).status).toBe(204);
    expect((await call('DELETE', `/tenants/${second.json.id}`, e2e.admin)).status).toBe(204);
  });
});

describe('environments', () => {
  it('creates global and tenant environments, reads, lists with a tenant filter, renames and deletes', async () => {
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Umbrella', slug: 'umbrella' });
    const global = await call('POST', '/environments', e2e.admin, { name: 'staging' });
    const scoped = await call('POST', '/environments', e2e.admin, { name: 'staging', tenant_id: tenant.json.id });
    expect([global.status, global.json.tenant_id]).toEqual([201, null]);
    expect([scoped.status, scoped.json.tenant_id]).toEqual([201, tenant.json.id]);
    expect(scoped.json).toMatchObject({
      short_id: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    expect((await call('GET', `/environments/${scoped.json.short_id}`, e2e.admin)).json).toEqual(scoped.json);
    const filtered = await call('GET', `/environments?tenant_id=${tenant.json.id}`, e2e.admin);
    expect(filtered.json.data.map((e: { id: string }) => e.id)).toEqual([scoped.json.id]);
    const all = await call('GET', '/environments', e2e.admin);
    expect(all.json.data.map((e: { id: string }) => e.id)).toEqual(
      expect.arrayContaining([global.json.id, scoped.json.id]),
    );

    const renamed = await call('PUT', `/environments/${global.json.id}`, e2e.admin, { name: 'pre-production' });
    expect([renamed.status, renamed.json.name]).toEqual([200, 'pre-production']);
    expect((await call('DELETE', `/environments/${global.json.short_id}`, e2e.admin)).status).toBe(204);
    expect((await call('GET', `/environments/${global.json.id}`, e2e.admin)).status).toBe(404);
  });

  it('answers 409 for a taken name in one scope, 400 for bad input or an unknown tenant, 404 for unknown environments', async () => {
    const first = await call('POST', '/environments', e2e.admin, { name: 'qa' });
    const second = await call('POST', '/environments', e2e.admin, { name: 'qa-2' });
    expect(first.status).toBe(201);

    expect((await call('POST', '/environments', e2e.admin, { name: 'QA' })).status).toBe(409);
    expect((await call('PUT', `/environments/${second.json.id}`, e2e.admin, { name: 'qa' })).status).toBe(409);
    const unknownTenant = await call('POST', '/environments', e2e.admin, {
      name: 'x',
      tenant_id: '00000000-0000-4000-8000-000000000000',
    });
    expect([unknownTenant.status, unknownTenant.json.error.code, fields(unknownTenant)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['tenant_id'],
    ]);
    const missing = await call('POST', '/environments', e2e.admin, {});
    expect([missing.status, missing.json.error.code, fields(missing)]).toEqual([400, 'MISSING_FIELD', ['name']]);
    expect((await call('PUT', `/environments/${first.json.id}`, e2e.admin, { name: 42 })).status).toBe(400);
    expect((await call('GET', '/environments?tenant_id=not-a-uuid', e2e.admin)).status).toBe(400);
    expect((await call('GET', '/environments/nope', e2e.admin)).status).toBe(404);
    expect((await call('PUT', '/environments/nope', e2e.admin, { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', '/environments/nope', e2e.admin)).status).toBe(404);
  });
});

describe('deployment freezes', () => {
  it('creates a global freeze and a scoped one, lists them with filters, reads, updates and deletes', async () => {
    // Prepare
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Frozen', slug: 'frozen' });
    const environment = await call('POST', '/environments', e2e.admin, {
      name: 'production',
      tenant_id: tenant.json.id,
    });
    // Act: a global freeze running now, a scoped one next week
    const global = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'Incident',
      start_time: hoursFromNow(-1),
      end_time: hoursFromNow(1),
    });
    const scoped = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'Release week',
      reason: 'quarter close',
      start_time: '2099-03-01T09:00:00+01:00',
      end_time: '2099-03-08T09:00:00+01:00',
      tenant_id: tenant.json.short_id,
      environment_id: environment.json.short_id,
    });
    // Assess
    expect(global.status).toBe(201);
    expect(global.json).toMatchObject({
      tenant_id: null,
      solution_id: null,
      environment_id: null,
      reason: null,
      active: true,
      created_by: expect.any(String),
      short_id: expect.any(String),
    });
    expect(scoped.status).toBe(201);
    expect(scoped.json).toMatchObject({
      start_time: '2099-03-01T08:00:00.000Z',
      end_time: '2099-03-08T08:00:00.000Z',
      tenant_id: tenant.json.id,
      environment_id: environment.json.id,
      solution_id: null,
      reason: 'quarter close',
      active: false,
    });
    expect(scoped.json.created_by).toBe(global.json.created_by);

    const list = await call('GET', '/deployment-freezes', e2e.admin);
    const ids = list.json.data.map((f: { id: string }) => f.id);
    expect(ids.indexOf(scoped.json.id)).toBeLessThan(ids.indexOf(global.json.id)); // newest start first
    const active = await call('GET', '/deployment-freezes?active=true', e2e.admin);
    expect(active.json.data.map((f: { id: string }) => f.id)).toContain(global.json.id);
    expect(active.json.data.map((f: { id: string }) => f.id)).not.toContain(scoped.json.id);
    expect(
      (await call('GET', `/deployment-freezes?tenant_id=${tenant.json.id}`, e2e.admin)).json.data.map(
        (f: { id: string }) => f.id,
      ),
    ).toEqual([scoped.json.id]);
    expect(
      (await call('GET', `/deployment-freezes?environment_id=${environment.json.id}`, e2e.admin)).json.data.map(
        (f: { id: string }) => f.id,
      ),
    ).toEqual([scoped.json.id]);
    expect((await call('GET', `/deployment-freezes/${scoped.json.short_id}`, e2e.admin)).json).toEqual(scoped.json);

    // An environment a freeze names cannot be deleted
    expect((await call('DELETE', `/environments/${environment.json.id}`, e2e.admin)).status).toBe(409);

    const updated = await call('PUT', `/deployment-freezes/${scoped.json.id}`, e2e.admin, {
      name: 'Release fortnight',
      end_time: '2099-03-15T08:00:00Z',
      environment_id: null,
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      name: 'Release fortnight',
      start_time: scoped.json.start_time,
      end_time: '2099-03-15T08:00:00.000Z',
      environment_id: null,
      tenant_id: tenant.json.id,
    });
    expect((await call('DELETE', `/environments/${environment.json.id}`, e2e.admin)).status).toBe(204);

    expect((await call('DELETE', `/deployment-freezes/${scoped.json.id}`, e2e.admin)).status).toBe(204);
    expect((await call('GET', `/deployment-freezes/${scoped.json.id}`, e2e.admin)).status).toBe(404);
    expect((await call('DELETE', `/deployment-freezes/${scoped.json.id}`, e2e.admin)).status).toBe(404);
    expect((await call('DELETE', `/deployment-freezes/${global.json.id}`, e2e.admin)).status).toBe(204);
  });

  it("scopes a freeze to a solution of the catalog, by short id, taking the solution's tenant; refuses another tenant's", async () => {
    // Prepare: a tenant's solution (an action, a sequence using it, a solution of that sequence)
    const owner = await call('POST', '/tenants', e2e.admin, { name: 'Solution owner', slug: 'solution-owner' });
    const stranger = await call('POST', '/tenants', e2e.admin, { name: 'Stranger', slug: 'stranger' });
    const action = await call('POST', '/actions', e2e.admin, {
      slug: 'freeze-probe',
      name: 'Probe',
      tenant_id: owner.json.id,
      version: { version: '1.0.0', script: 'true' },
    });
    const sequence = await call('POST', '/sequences', e2e.admin, {
      name: 'Probe sequence',
      tenant_id: owner.json.id,
      steps: [{ action_id: action.json.id, version_requirement: '^1.0.0' }],
    });
    const solution = await call('POST', '/solutions', e2e.admin, {
      name: 'Probe solution',
      tenant_id: owner.json.id,
      sequences: [{ sequence_id: sequence.json.id }],
    });
    expect([action.status, sequence.status, solution.status]).toEqual([201, 201, 201]);
    const window = { start_time: '2099-06-01T00:00:00Z', end_time: '2099-06-02T00:00:00Z' };
    // Act
    const scoped = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'Solution freeze',
      ...window,
      solution_id: solution.json.short_id,
    });
    const mismatched = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'Wrong tenant',
      ...window,
      tenant_id: stranger.json.id,
      solution_id: solution.json.id,
    });
    // Assess
    expect([scoped.status, scoped.json.solution_id, scoped.json.tenant_id]).toEqual([
      201,
      solution.json.id,
      owner.json.id,
    ]);
    expect([mismatched.status, fields(mismatched)]).toEqual([400, ['solution_id']]);
  });

  it('answers 400 naming the field for bad times and unknown references, 404 for unknown freezes', async () => {
    const base = { name: 'x', start_time: '2099-01-01T00:00:00Z', end_time: '2099-01-02T00:00:00Z' };

    const backwards = await call('POST', '/deployment-freezes', e2e.admin, {
      ...base,
      end_time: '2098-12-31T00:00:00Z',
    });
    expect([backwards.status, backwards.json.error.code, fields(backwards)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['end_time'],
    ]);
    expect(
      fields(await call('POST', '/deployment-freezes', e2e.admin, { ...base, start_time: '2099-01-01T00:00:00' })),
    ).toEqual(['start_time']);
    for (const field of ['tenant_id', 'solution_id', 'environment_id']) {
      const reply = await call('POST', '/deployment-freezes', e2e.admin, { ...base, [field]: 'ghost' });
      expect([field, reply.status, fields(reply)]).toEqual([field, 400, [field]]);
    }
    const missing = await call('POST', '/deployment-freezes', e2e.admin, { name: 'x' });
    expect([missing.status, missing.json.error.code, fields(missing).sort()]).toEqual([
      400,
      'MISSING_FIELD',
      ['end_time', 'start_time'],
    ]);
    expect((await call('GET', '/deployment-freezes?active=maybe', e2e.admin)).status).toBe(400);
    expect((await call('GET', '/deployment-freezes/nope', e2e.admin)).status).toBe(404);
    expect((await call('PUT', '/deployment-freezes/nope', e2e.admin, { name: 'y' })).status).toBe(404);
  });
});

describe('tenant isolation', () => {
  it("keeps a tenant-scoped administrator to its tenant's records and global ones, read-only for the global ones", async () => {
    // Prepare: two tenants, a global and a per-tenant environment and freeze, and an admin of tenant A
    const tenantA = await call('POST', '/tenants', e2e.admin, { name: 'Tenant A', slug: 'tenant-a' });
    const tenantB = await call('POST', '/tenants', e2e.admin, { name: 'Tenant B', slug: 'tenant-b' });
    const globalEnv = await call('POST', '/environments', e2e.admin, { name: 'shared-iso' });
    const envB = await call('POST', '/environments', e2e.admin, { name: 'prod-b', tenant_id: tenantB.json.id });
    const freezeGlobal = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'Global',
      start_time: '2099-05-01T00:00:00Z',
      end_time: '2099-05-02T00:00:00Z',
    });
    const freezeB = await call('POST', '/deployment-freezes', e2e.admin, {
      name: 'B only',
      start_time: '2099-05-01T00:00:00Z',
      end_time: '2099-05-02T00:00:00Z',
      tenant_id: tenantB.json.id,
    });
    await createUser('tina@example.com', 'tina-password', ['admin'], tenantA.json.id);
    const tina = await login('tina@example.com', 'tina-password');

    // Tenants: only its own; no tenant administration
    expect((await call('GET', '/tenants', tina)).json.data.map((t: { id: string }) => t.id)).toEqual([tenantA.json.id]);
    expect((await call('GET', `/tenants/${tenantA.json.short_id}`, tina)).status).toBe(200);
    expect((await call('GET', `/tenants/${tenantB.json.id}`, tina)).status).toBe(404);
    const createTenant = await call('POST', '/tenants', tina, { name: 'Mine', slug: 'mine' });
    expect([createTenant.status, createTenant.json.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await call('PUT', `/tenants/${tenantA.json.id}`, tina, { name: 'Renamed' })).status).toBe(403);
    expect((await call('DELETE', `/tenants/${tenantA.json.id}`, tina)).status).toBe(403);

    // Environments: created in its tenant; another tenant's are invisible; global ones read-only
    const envA = await call('POST', '/environments', tina, { name: 'prod-a' });
    expect([envA.status, envA.json.tenant_id]).toEqual([201, tenantA.json.id]);
    expect((await call('POST', '/environments', tina, { name: 'sneaky', tenant_id: tenantB.json.id })).status).toBe(
      403,
    );
    const visibleEnvs = (await call('GET', `/environments?tenant_id=${tenantB.json.id}`, tina)).json.data.map(
      (e: { id: string }) => e.id,
    );
    expect(visibleEnvs).toEqual(expect.arrayContaining([envA.json.id, globalEnv.json.id]));
    expect(visibleEnvs).not.toContain(envB.json.id);
    expect((await call('GET', `/environments/${envB.json.short_id}`, tina)).status).toBe(404);
    expect((await call('GET', `/environments/${globalEnv.json.id}`, tina)).status).toBe(200);
    expect((await call('PUT', `/environments/${globalEnv.json.id}`, tina, { name: 'taken-over' })).status).toBe(403);
    expect((await call('DELETE', `/environments/${envB.json.id}`, tina)).status).toBe(404);

    // Freezes: its own default to its tenant; global ones visible but read-only; another tenant's invisible
    const freezeA = await call('POST', '/deployment-freezes', tina, {
      name: 'A only',
      start_time: '2099-05-01T00:00:00Z',
      end_time: '2099-05-02T00:00:00Z',
      environment_id: envA.json.id,
    });
    expect([freezeA.status, freezeA.json.tenant_id]).toEqual([201, tenantA.json.id]);
    expect(
      (
        await call('POST', '/deployment-freezes', tina, {
          name: 'global',
          start_time: '2099-05-01T00:00:00Z',
          end_time: '2099-05-02T00:00:00Z',
          tenant_id: null,
        })
      ).status,
    ).toBe(403);
    const otherEnv = await call('POST', '/deployment-freezes', tina, {
      name: 'x',
      start_time: '2099-05-01T00:00:00Z',
      end_time: '2099-05-02T00:00:00Z',
      environment_id: envB.json.id,
    });
    expect([otherEnv.status, fields(otherEnv)]).toEqual([400, ['environment_id']]);
    const visibleFreezes = (await call('GET', '/deployment-freezes', tina)).json.data.map((f: { id: string }) => f.id);
    expect(visibleFreezes.sort()).toEqual([freezeA.json.id, freezeGlobal.json.id].sort());
    expect((await call('GET', `/deployment-freezes/${freezeB.json.short_id}`, tina)).status).toBe(404);
    expect((await call('DELETE', `/deployment-freezes/${freezeGlobal.json.id}`, tina)).status).toBe(403);
    expect((await call('DELETE', `/deployment-freezes/${freezeA.json.id}`, tina)).status).toBe(204);
  });
});
