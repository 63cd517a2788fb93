// The catalog over HTTP: every status of the spec's Actions table, sequences and solutions with short ids,
// the referential 409s, and tenant isolation.
import { describe, expect, it } from 'vitest';
import { apiClient, type Reply } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('catalog');

const api = apiClient(() => e2e.stack.baseUrl);
/** An API call: paths relative to /api/v1, a bearer token (undefined: none), a JSON body. */
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });
const login = async (email: string, password: string): Promise<string> => (await api.login({ email, password })).token;
const fields = (reply: Reply): string[] =>
  (reply.json.error.details?.fields ?? []).map((f: { field: string }) => f.field);
const outcome = (reply: Reply) => [reply.status, reply.json?.error?.code];

let slugs = 0;
const newAction = (overrides: Record<string, unknown> = {}) => {
  slugs += 1;
  return {
    slug: `action-${slugs}`,
    name: `Action ${slugs}`,
    version: { version: '1.0.0', script: 'echo one' },
    ...overrides,
  };
};
const created = async (token: string, path: string, body: unknown) => {
  const reply = await call('POST', path, token, body);
  if (reply.status !== 201) throw new Error(`POST ${path} answered ${reply.status}: ${JSON.stringify(reply.json)}`);
  return reply.json;
};

describe('actions: the statuses of the spec’s table', () => {
  it('401 without a credential on every action route', async () => {
    for (const [method, path] of [
      ['GET', '/actions'],
      ['POST', '/actions'],
      ['GET', '/actions/x'],
      ['PUT', '/actions/x'],
      ['DELETE', '/actions/x'],
      ['GET', '/actions/x/versions'],
      ['POST', '/actions/x/versions'],
      ['GET', '/actions/x/versions/1.0.0'],
      ['PUT', '/actions/x/versions/1.0.0'],
      ['DELETE', '/actions/x/versions/1.0.0'],
    ] as const) {
      const reply = await call(method, path, undefined, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect([method, path, ...outcome(reply)]).toEqual([method, path, 401, 'MISSING_AUTH_HEADER']);
    }
  });

  it('403 for a user without the permission; reading needs actions:read only', async () => {
    // Prepare: the `user` role reads the catalog but changes nothing
    await createUser('viewer@example.com', 'viewer-password', ['user']);
    const viewer = await login('viewer@example.com', 'viewer-password');
    const action = await created(e2e.admin, '/actions', newAction());
    // Act + Assess
    expect((await call('GET', '/actions', viewer)).status).toBe(200);
    expect((await call('GET', `/actions/${action.id}/versions/1.0.0`, viewer)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/actions', newAction()],
      ['PUT', `/actions/${action.id}`, { name: 'x' }],
      ['DELETE', `/actions/${action.id}`, undefined],
      ['POST', `/actions/${action.id}/versions`, { version: '2.0.0', script: 'x' }],
      ['PUT', `/actions/${action.id}/versions/1.0.0`, { script: 'x' }],
      ['DELETE', `/actions/${action.id}/versions/1.0.0`, undefined],
    ] as const) {
      const reply = await call(method, path, viewer, body);
      expect([method, path, ...outcome(reply)]).toEqual([method, path, 403, 'INSUFFICIENT_PERMISSIONS']);
    }
    expect((await call('GET', `/actions/${action.id}`, e2e.admin)).json.versions).toHaveLength(1); // unchanged
  });

  it('POST /actions: 201 with the initial version, 400 for bad input, 409 when the slug exists', async () => {
    // 201
    const body = newAction({
      slug: 'restart-nginx',
      description: 'Restarts nginx',
      version: {
        version: '1.0.0',
        script: 'systemctl restart nginx',
        interpreter: 'bash',
        timeout_seconds: 60,
        variables: [{ name: 'SERVICE', default: 'nginx', required: true }],
        changelog: 'first',
      },
    });
    const reply = await call('POST', '/actions', e2e.admin, body);
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({
      slug: 'restart-nginx',
      name: body.name,
      description: 'Restarts nginx',
      tenant_id: null,
      latest_version: '1.0.0',
      short_id: expect.any(String),
    });
    expect(reply.json.versions).toEqual([
      {
        id: expect.any(String),
        action_id: reply.json.id,
        version: '1.0.0',
        script: 'systemctl restart nginx',
        interpreter: 'bash',
        rollback_script: null,
        timeout_seconds: 60,
        variables: [{ name: 'SERVICE', description: null, required: true, default: 'nginx', secret: false }],
        changelog: 'first',
        created_at: expect.any(String),
        created_by: expect.any(String),
      },
    ]);
    // 400: named fields
    const badVersion = await call(
      'POST',
      '/actions',
      e2e.admin,
      newAction({ version: { version: '1.0', script: 'x' } }),
    );
    expect([...outcome(badVersion), fields(badVersion)]).toEqual([400, 'VALIDATION_ERROR', ['version.version']]);
    const badShape = await call('POST', '/actions', e2e.admin, {
      slug: 'Not A Slug',
      name: 'x',
      version: {
        version: '1.0.0',
        script: 'x',
        interpreter: 'ruby',
        timeout_seconds: 0,
        variables: [{ name: 'BAD-NAME' }],
      },
    });
    expect([...outcome(badShape), fields(badShape)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['slug', 'version.interpreter', 'version.timeout_seconds', 'version.variables.0.name'],
    ]);
    const missing = await call('POST', '/actions', e2e.admin, { slug: 'no-version', name: 'x' });
    expect([...outcome(missing), fields(missing)]).toEqual([400, 'MISSING_FIELD', ['version']]);
    // 409
    const taken = await call('POST', '/actions', e2e.admin, newAction({ slug: 'restart-nginx' }));
    expect([...outcome(taken), taken.json.error.details]).toEqual([409, 'CONFLICT', { field: 'slug' }]);
  });

  it('GET /actions and /actions/{id}: 200 paginated and by id or short id, 404 unknown', async () => {
    const action = await created(e2e.admin, '/actions', newAction());
    const list = await call('GET', '/actions?limit=2', e2e.admin);
    expect(list.status).toBe(200);
    expect(list.json.meta).toMatchObject({ page: 1, limit: 2, has_prev: false });
    expect(list.json.data.length).toBeLessThanOrEqual(2);
    expect(list.json.data[0]).not.toHaveProperty('versions');
    const badPage = await call('GET', '/actions?limit=101', e2e.admin);
    expect([...outcome(badPage), fields(badPage)]).toEqual([400, 'VALIDATION_ERROR', ['limit']]);
    expect((await call('GET', `/actions/${action.id}`, e2e.admin)).json).toEqual(action);
    expect((await call('GET', `/actions/${action.short_id}`, e2e.admin)).json).toEqual(action);
    expect(outcome(await call('GET', '/actions/00000000-0000-4000-8000-000000000000', e2e.admin))).toEqual([
      404,
      'NOT_FOUND',
    ]);
    expect(outcome(await call('GET', '/actions/nope', e2e.admin))).toEqual([404, 'NOT_FOUND']);
  });

  it('PUT /actions/{id}: 200 changes the name, 400 for a bad name or a slug, 404 unknown', async () => {
    const action = await created(e2e.admin, '/actions', newAction());
    const renamed = await call('PUT', `/actions/${action.short_id}`, e2e.admin, {
      name: 'Renamed',
      description: 'now described',
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({
      id: action.id,
      slug: action.slug,
      name: 'Renamed',
      description: 'now described',
      latest_version: '1.0.0',
    });
    expect(renamed.json.versions).toHaveLength(1);
    const empty = await call('PUT', `/actions/${action.id}`, e2e.admin, { name: '  ' });
    expect([...outcome(empty), fields(empty)]).toEqual([400, 'VALIDATION_ERROR', ['name']]);
    const slug = await call('PUT', `/actions/${action.id}`, e2e.admin, { name: 'x', slug: 'other' });
    expect([...outcome(slug), fields(slug)]).toEqual([400, 'VALIDATION_ERROR', ['slug']]);
    expect(
      outcome(await call('PUT', '/actions/00000000-0000-4000-8000-000000000000', e2e.admin, { name: 'x' })),
    ).toEqual([404, 'NOT_FOUND']);
    expect((await call('GET', `/actions/${action.id}`, e2e.admin)).json.slug).toBe(action.slug);
  });

  it('versions: list 200 newest first / 404; create 201 / 400 / 404 / 409; get 200 / 404', async () => {
    const action = await created(e2e.admin, '/actions', newAction());
    // create
    for (const version of ['1.10.0', '1.9.0'])
      expect(
        (await call('POST', `/actions/${action.id}/versions`, e2e.admin, { version, script: `echo ${version}` }))
          .status,
      ).toBe(201);
    const v2 = await call('POST', `/actions/${action.short_id}/versions`, e2e.admin, {
      version: '2.0.0',
      script: 'echo two',
      rollback_script: 'echo undo',
    });
    expect(v2.status).toBe(201);
    expect(v2.json).toMatchObject({
      action_id: action.id,
      version: '2.0.0',
      interpreter: 'sh',
      rollback_script: 'echo undo',
      variables: [],
    });
    const bad = await call('POST', `/actions/${action.id}/versions`, e2e.admin, { version: 'two', script: 'x' });
    expect([...outcome(bad), fields(bad)]).toEqual([400, 'VALIDATION_ERROR', ['version']]);
    expect(
      outcome(
        await call('POST', '/actions/00000000-0000-4000-8000-000000000000/versions', e2e.admin, {
          version: '1.0.0',
          script: 'x',
        }),
      ),
    ).toEqual([404, 'NOT_FOUND']);
    const exists = await call('POST', `/actions/${action.id}/versions`, e2e.admin, { version: '1.9.0', script: 'x' });
    expect([...outcome(exists), exists.json.error.details]).toEqual([409, 'CONFLICT', { field: 'version' }]);
    // list
    const list = await call('GET', `/actions/${action.id}/versions`, e2e.admin);
    expect(list.status).toBe(200);
    expect(list.json.map((v: { version: string }) => v.version)).toEqual(['2.0.0', '1.10.0', '1.9.0', '1.0.0']);
    expect((await call('GET', `/actions/${action.id}`, e2e.admin)).json.latest_version).toBe('2.0.0');
    expect(outcome(await call('GET', '/actions/nope/versions', e2e.admin))).toEqual([404, 'NOT_FOUND']);
    // get
    const one = await call('GET', `/actions/${action.id}/versions/1.9.0`, e2e.admin);
    expect([one.status, one.json.script]).toEqual([200, 'echo 1.9.0']);
    expect(outcome(await call('GET', `/actions/${action.id}/versions/3.0.0`, e2e.admin))).toEqual([404, 'NOT_FOUND']);
    expect(outcome(await call('GET', `/actions/${action.id}/versions/not-a-version`, e2e.admin))).toEqual([
      404,
      'NOT_FOUND',
    ]);
  });

  it('PUT /actions/{id}/versions/{version}: 200 changes fields and number, 400 not semver, 404, 409 number taken', async () => {
    const action = await created(e2e.admin, '/actions', newAction());
    await created(e2e.admin, `/actions/${action.id}/versions`, { version: '1.1.0', script: 'echo b' });
    const updated = await call('PUT', `/actions/${action.id}/versions/1.0.0`, e2e.admin, {
      script: 'echo a2',
      interpreter: 'python3',
      changelog: 'fix',
      variables: [{ name: 'TOKEN', secret: true }],
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      version: '1.0.0',
      script: 'echo a2',
      interpreter: 'python3',
      changelog: 'fix',
      variables: [{ name: 'TOKEN', secret: true, default: null }],
    });
    const renumbered = await call('PUT', `/actions/${action.short_id}/versions/1.0.0`, e2e.admin, { version: '3.0.0' });
    expect([renumbered.status, renumbered.json.version, renumbered.json.id]).toEqual([200, '3.0.0', updated.json.id]);
    expect(
      (await call('GET', `/actions/${action.id}`, e2e.admin)).json.versions.map((v: { version: string }) => v.version),
    ).toEqual(['3.0.0', '1.1.0']);
    const bad = await call('PUT', `/actions/${action.id}/versions/3.0.0`, e2e.admin, { version: 'x.y.z' });
    expect([...outcome(bad), fields(bad)]).toEqual([400, 'VALIDATION_ERROR', ['version']]);
    const secretDefault = await call('PUT', `/actions/${action.id}/versions/3.0.0`, e2e.admin, {
      variables: [{ name: 'TOKEN', secret: true, default: 'hunter2' }],
    });
    expect([...outcome(secretDefault), fields(secretDefault)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['variables.0.default'],
    ]);
    expect(outcome(await call('PUT', `/actions/${action.id}/versions/1.0.0`, e2e.admin, { script: 'x' }))).toEqual([
      404,
      'NOT_FOUND',
    ]);
    expect(outcome(await call('PUT', '/actions/nope/versions/1.1.0', e2e.admin, { script: 'x' }))).toEqual([
      404,
      'NOT_FOUND',
    ]);
    const taken = await call('PUT', `/actions/${action.id}/versions/3.0.0`, e2e.admin, { version: '1.1.0' });
    expect([...outcome(taken), taken.json.error.details]).toEqual([409, 'CONFLICT', { field: 'version' }]);
  });

  it('DELETE a version: 204, 400 for the last one, 404; DELETE an action: 204 with its versions, 404', async () => {
    const action = await created(e2e.admin, '/actions', newAction());
    await created(e2e.admin, `/actions/${action.id}/versions`, { version: '1.1.0', script: 'echo b' });
    const deleted = await call('DELETE', `/actions/${action.id}/versions/1.1.0`, e2e.admin);
    expect([deleted.status, deleted.json]).toEqual([204, undefined]);
    expect(outcome(await call('DELETE', `/actions/${action.id}/versions/1.1.0`, e2e.admin))).toEqual([
      404,
      'NOT_FOUND',
    ]);
    const last = await call('DELETE', `/actions/${action.id}/versions/1.0.0`, e2e.admin);
    expect([...outcome(last), fields(last)]).toEqual([400, 'VALIDATION_ERROR', ['version']]);
    expect((await call('GET', `/actions/${action.id}/versions`, e2e.admin)).json).toHaveLength(1);

    await created(e2e.admin, `/actions/${action.id}/versions`, { version: '2.0.0', script: 'echo c' });
    expect((await call('DELETE', `/actions/${action.short_id}`, e2e.admin)).status).toBe(204);
    expect(outcome(await call('GET', `/actions/${action.id}`, e2e.admin))).toEqual([404, 'NOT_FOUND']);
    expect(outcome(await call('GET', `/actions/${action.id}/versions/2.0.0`, e2e.admin))).toEqual([404, 'NOT_FOUND']);
    expect(outcome(await call('DELETE', `/actions/${action.id}`, e2e.admin))).toEqual([404, 'NOT_FOUND']);
    // The slug is free again.
    expect((await call('POST', '/actions', e2e.admin, newAction({ slug: action.slug }))).status).toBe(201);
  });
});

describe('sequences and solutions', () => {
  it('builds a sequence and a solution from short ids, and guards every reference with 409', async () => {
    // Prepare: two actions, one with versions 1.0.0 and 1.1.0
    const web = await created(e2e.admin, '/actions', newAction({ slug: 'deploy-web' }));
    await created(e2e.admin, `/actions/${web.id}/versions`, { version: '1.1.0', script: 'echo web 1.1' });
    const migrate = await created(e2e.admin, '/actions', newAction({ slug: 'migrate-db' }));

    // A sequence
    const bad = await call('POST', '/sequences', e2e.admin, {
      name: 'Release',
      steps: [{ action_id: web.short_id, version_requirement: '^2.0.0' }, { action_id: 'nope' }],
    });
    expect([...outcome(bad), fields(bad)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['steps.0.version_requirement', 'steps.1.action_id'],
    ]);
    const sequence = await call('POST', '/sequences', e2e.admin, {
      name: 'Release',
      description: 'web then db',
      steps: [{ action_id: web.short_id, version_requirement: '~1.1.0' }, { action_id: migrate.short_id }],
    });
    expect(sequence.status).toBe(201);
    expect(sequence.json).toMatchObject({
      name: 'Release',
      description: 'web then db',
      version: '1.0.0',
      tenant_id: null,
      steps: [
        { order: 1, action_id: web.id, version_requirement: '~1.1.0' },
        { order: 2, action_id: migrate.id, version_requirement: null },
      ],
    });
    expect((await call('GET', `/sequences/${sequence.json.short_id}`, e2e.admin)).json).toEqual(sequence.json);
    const sequences = await call('GET', '/sequences', e2e.admin);
    expect([sequences.status, sequences.json.data.map((s: { id: string }) => s.id)]).toEqual([200, [sequence.json.id]]);

    // A solution
    const solution = await call('POST', '/solutions', e2e.admin, {
      name: 'Platform',
      version: '2.1.0',
      sequences: [{ sequence_id: sequence.json.short_id }],
    });
    expect(solution.status).toBe(201);
    expect(solution.json).toMatchObject({
      name: 'Platform',
      version: '2.1.0',
      sequences: [{ order: 1, sequence_id: sequence.json.id }],
    });
    expect((await call('GET', `/solutions/${solution.json.short_id}`, e2e.admin)).json).toEqual(solution.json);
    expect((await call('GET', '/solutions', e2e.admin)).json.meta.total).toBe(1);

    // References: 409s
    const actionInUse = await call('DELETE', `/actions/${migrate.id}`, e2e.admin);
    expect([...outcome(actionInUse), actionInUse.json.error.details]).toEqual([
      409,
      'CONFLICT',
      { sequences: [{ id: sequence.json.id, name: 'Release' }] },
    ]);
    const onlyVersion = await call('DELETE', `/actions/${web.id}/versions/1.1.0`, e2e.admin);
    expect(outcome(onlyVersion)).toEqual([409, 'CONFLICT']);
    expect(outcome(await call('PUT', `/actions/${web.id}/versions/1.1.0`, e2e.admin, { version: '2.0.0' }))).toEqual([
      409,
      'CONFLICT',
    ]);
    expect((await call('DELETE', `/actions/${web.id}/versions/1.0.0`, e2e.admin)).status).toBe(204); // no step needs it
    const sequenceInUse = await call('DELETE', `/sequences/${sequence.json.id}`, e2e.admin);
    expect([...outcome(sequenceInUse), sequenceInUse.json.error.details]).toEqual([
      409,
      'CONFLICT',
      { solutions: [{ id: solution.json.id, name: 'Platform' }] },
    ]);

    // Updates
    const updated = await call('PUT', `/sequences/${sequence.json.id}`, e2e.admin, {
      name: 'Release 2',
      version: '1.1.0',
      steps: [{ action_id: web.id }],
    });
    expect(updated.json).toMatchObject({
      name: 'Release 2',
      version: '1.1.0',
      steps: [{ order: 1, action_id: web.id, version_requirement: null }],
    });
    expect(outcome(await call('PUT', `/sequences/${sequence.json.id}`, e2e.admin, { tenant_id: null }))).toEqual([
      400,
      'VALIDATION_ERROR',
    ]);
    expect((await call('PUT', `/solutions/${solution.json.id}`, e2e.admin, { name: 'Platform 2' })).json.name).toBe(
      'Platform 2',
    );

    // Unwind: the action no step uses any more goes first, then solution, sequence, the last action
    expect((await call('DELETE', `/actions/${migrate.id}`, e2e.admin)).status).toBe(204);
    expect((await call('DELETE', `/solutions/${solution.json.short_id}`, e2e.admin)).status).toBe(204);
    expect(outcome(await call('GET', `/solutions/${solution.json.id}`, e2e.admin))).toEqual([404, 'NOT_FOUND']);
    expect((await call('DELETE', `/sequences/${sequence.json.short_id}`, e2e.admin)).status).toBe(204);
    expect(outcome(await call('DELETE', `/sequences/${sequence.json.id}`, e2e.admin))).toEqual([404, 'NOT_FOUND']);
    expect((await call('DELETE', `/actions/${web.id}`, e2e.admin)).status).toBe(204);
  });
});

describe('tenant isolation', () => {
  it('tenant users see global records and their own, change only their own, and never see another tenant’s', async () => {
    // Prepare: two tenants, an operator in each, a global action
    const acme = await created(e2e.admin, '/tenants', { name: 'Acme', slug: 'acme' });
    const globex = await created(e2e.admin, '/tenants', { name: 'Globex', slug: 'globex' });
    await createUser('acme-ops@example.com', 'acme-password', ['operator'], acme.id);
    await createUser('globex-ops@example.com', 'globex-password', ['operator'], globex.id);
    const acmeOps = await login('acme-ops@example.com', 'acme-password');
    const globexOps = await login('globex-ops@example.com', 'globex-password');
    const shared = await created(e2e.admin, '/actions', newAction({ slug: 'shared-tool' }));

    // Act: each tenant makes its own action with the same slug; Acme builds on the global one
    const acmeAction = await created(acmeOps, '/actions', newAction({ slug: 'deploy' }));
    const globexAction = await created(globexOps, '/actions', newAction({ slug: 'deploy' }));
    const acmeSequence = await created(acmeOps, '/sequences', {
      name: 'acme release',
      steps: [{ action_id: shared.short_id }, { action_id: acmeAction.short_id }],
    });
    const acmeSolution = await created(acmeOps, '/solutions', {
      name: 'acme platform',
      sequences: [{ sequence_id: acmeSequence.id }],
    });

    // Assess: ownership
    expect([acmeAction.tenant_id, globexAction.tenant_id, acmeSequence.tenant_id, acmeSolution.tenant_id]).toEqual([
      acme.id,
      globex.id,
      acme.id,
      acme.id,
    ]);
    // Visibility
    const acmeSees = (await call('GET', '/actions?limit=100', acmeOps)).json.data.map((a: { id: string }) => a.id);
    expect(acmeSees).toContain(shared.id);
    expect(acmeSees).toContain(acmeAction.id);
    expect(acmeSees).not.toContain(globexAction.id);
    expect(outcome(await call('GET', `/actions/${acmeAction.id}`, globexOps))).toEqual([404, 'NOT_FOUND']);
    expect(outcome(await call('GET', `/sequences/${acmeSequence.short_id}`, globexOps))).toEqual([404, 'NOT_FOUND']);
    expect(outcome(await call('GET', `/solutions/${acmeSolution.id}`, globexOps))).toEqual([404, 'NOT_FOUND']);
    expect(outcome(await call('DELETE', `/actions/${acmeAction.id}`, globexOps))).toEqual([404, 'NOT_FOUND']);
    expect((await call('GET', '/sequences', globexOps)).json.data).toEqual([]);
    const adminFiltered = (await call('GET', `/actions?tenant_id=${globex.id}&limit=100`, e2e.admin)).json.data.map(
      (a: { id: string }) => a.id,
    );
    expect(adminFiltered).toContain(globexAction.id);
    expect(adminFiltered).not.toContain(acmeAction.id);
    // Changes: global records are read-only for tenants, other tenants are out of reach
    const changeGlobal = await call('PUT', `/actions/${shared.id}`, acmeOps, { name: 'mine now' });
    expect([...outcome(changeGlobal), changeGlobal.json.error.details]).toEqual([
      403,
      'FORBIDDEN',
      { reason: 'tenant_restriction' },
    ]);
    expect(outcome(await call('POST', '/actions', acmeOps, newAction({ tenant_id: globex.id })))).toEqual([
      403,
      'FORBIDDEN',
    ]);
    const foreignStep = await call('POST', '/sequences', acmeOps, {
      name: 'x',
      steps: [{ action_id: globexAction.id }],
    });
    expect([...outcome(foreignStep), fields(foreignStep)]).toEqual([400, 'VALIDATION_ERROR', ['steps.0.action_id']]);
    const globalSequence = await call('POST', '/sequences', e2e.admin, {
      name: 'x',
      steps: [{ action_id: acmeAction.id }],
    });
    expect([...outcome(globalSequence), fields(globalSequence)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['steps.0.action_id'],
    ]);
    // A global admin creates for a tenant by its short id; an unknown tenant is 400
    const forGlobex = await created(e2e.admin, '/actions', newAction({ tenant_id: globex.short_id }));
    expect(forGlobex.tenant_id).toBe(globex.id);
    const unknownTenant = await call('POST', '/actions', e2e.admin, newAction({ tenant_id: 'no-such-tenant' }));
    expect([...outcome(unknownTenant), fields(unknownTenant)]).toEqual([400, 'VALIDATION_ERROR', ['tenant_id']]);
    // A tenant with catalog records cannot be deleted
    expect((await call('DELETE', `/tenants/${globex.id}`, e2e.admin)).status).toBe(409);
  });
});
