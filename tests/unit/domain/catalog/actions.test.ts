import { describe, expect, it } from 'vitest';
import {
  createAction,
  createVersion,
  deleteAction,
  deleteVersion,
  getAction,
  getVersion,
  listActions,
  listVersions,
  updateAction,
  updateVersion,
} from '../../../../domain/catalog/actions.js';
import { ConcurrentChangeError } from '../../../../domain/catalog/errors.js';
import { createSequence, deleteSequence } from '../../../../domain/catalog/sequences.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { ForbiddenError } from '../../../../domain/identity/errors.js';
import { catalogCaller as caller, catalogFakes, TENANT_A, TENANT_B } from '../../../fakes/catalog.js';

const global = caller();
const inA = caller(TENANT_A);
const inB = caller(TENANT_B);

const newAction = (slug = 'restart-nginx', extra: Record<string, unknown> = {}) => ({
  slug,
  name: 'Restart nginx',
  version: { version: '1.0.0', script: 'systemctl restart nginx' },
  ...extra,
});

const fieldsOf = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fields.map((f) => f.field);
};

describe('createAction', () => {
  it('creates an action with its first version and the defaults', async () => {
    // Prepare
    const { deps } = catalogFakes();
    // Act
    const detail = await createAction(deps, global, newAction('Restart-Nginx', { description: 'Restarts it' }));
    // Assess
    expect(detail).toMatchObject({
      slug: 'restart-nginx',
      name: 'Restart nginx',
      description: 'Restarts it',
      tenant_id: null,
      latest_version: '1.0.0',
    });
    expect(detail.short_id).toEqual(expect.any(String));
    expect(detail.versions).toEqual([
      {
        id: expect.any(String),
        action_id: detail.id,
        version: '1.0.0',
        script: 'systemctl restart nginx',
        interpreter: 'sh',
        rollback_script: null,
        timeout_seconds: null,
        variables: [],
        changelog: null,
        created_at: '2026-11-22T10:00:00.000Z',
        created_by: global.userId,
      },
    ]);
  });

  it('keeps slugs unique within a scope only: 409 in the same scope, fine in another', async () => {
    const { deps } = catalogFakes();
    await createAction(deps, global, newAction());
    await expect(createAction(deps, global, newAction())).rejects.toBeInstanceOf(ConflictError);
    await expect(createAction(deps, inA, newAction())).resolves.toMatchObject({ tenant_id: TENANT_A });
    await expect(createAction(deps, inA, newAction())).rejects.toBeInstanceOf(ConflictError);
    await expect(
      createAction(deps, global, newAction('restart-nginx', { tenant_id: TENANT_B })),
    ).resolves.toMatchObject({ tenant_id: TENANT_B });
  });

  it('normalises the version and rejects one that is not semver, naming version.version', async () => {
    const { deps } = catalogFakes();
    expect(
      (await createAction(deps, global, { ...newAction(), version: { version: 'v2.1.0', script: 'x' } }))
        .latest_version,
    ).toBe('2.1.0');
    expect(
      await fieldsOf(createAction(deps, global, { ...newAction('b'), version: { version: '1.0', script: 'x' } })),
    ).toEqual(['version.version']);
  });

  it('checks variables: env-var names, unique names, no stored default for a secret', async () => {
    const { deps } = catalogFakes();
    const variables = [
      { name: 'PORT', default: '80' },
      { name: '1BAD' },
      { name: 'PORT' },
      { name: 'TOKEN', secret: true, default: 'hunter2' },
    ];
    expect(
      await fieldsOf(
        createAction(deps, global, { ...newAction(), version: { version: '1.0.0', script: 'x', variables } }),
      ),
    ).toEqual(['version.variables.1.name', 'version.variables.2.name', 'version.variables.3.default']);
    const ok = await createAction(deps, global, {
      ...newAction(),
      version: {
        version: '1.0.0',
        script: 'x',
        variables: [
          { name: '_PORT', required: true, description: 'port' },
          { name: 'TOKEN', secret: true },
        ],
      },
    });
    expect(ok.versions[0]?.variables).toEqual([
      { name: '_PORT', description: 'port', required: true, default: null, secret: false },
      { name: 'TOKEN', description: null, required: false, default: null, secret: true },
    ]);
  });

  it('refuses variable names that change how a program starts, at create, new version and update (deny list, any case)', async () => {
    // Prepare
    const { deps } = catalogFakes();
    const made = await createAction(deps, global, {
      ...newAction(),
      version: { version: '1.0.0', script: 'x', variables: [{ name: 'PORT' }] },
    });
    const declaring = (...names: string[]) => ({
      version: '2.0.0',
      script: 'x',
      variables: names.map((name) => ({ name })),
    });
    // Act
    const atCreate = await createAction(deps, global, {
      ...newAction('other'),
      version: { ...declaring('PORT', 'NODE_OPTIONS', 'ld_preload'), version: '1.0.0' },
    }).catch((e: unknown) => e);
    const atVersion = fieldsOf(
      createVersion(
        deps,
        global,
        made.id,
        declaring('SHELLOPTS', 'OK', 'PS4', 'BASH_ENV', 'PYTHONWARNINGS', 'BROWSER'),
      ),
    );
    const atUpdate = updateVersion(deps, global, made.id, '1.0.0', {
      variables: [{ name: 'PORT' }, { name: 'NODE_ENV' }, { name: 'Path' }],
    }).catch((e: unknown) => e);
    // Assess
    expect((atCreate as ValidationError).fields.map((f) => [f.field, f.message])).toEqual([
      [
        'version.variables.1.name',
        expect.stringContaining("Variable NODE_OPTIONS is not allowed in a command's environment"),
      ],
      [
        'version.variables.2.name',
        expect.stringContaining("Variable ld_preload is not allowed in a command's environment"),
      ],
    ]);
    expect(await atVersion).toEqual([
      'variables.0.name',
      'variables.2.name',
      'variables.3.name',
      'variables.4.name',
      'variables.5.name',
    ]);
    expect(((await atUpdate) as ValidationError).fields.map((f) => f.field)).toEqual(['variables.2.name']);
    expect((await getVersion(deps, global, made.id, '1.0.0')).variables.map((v) => v.name)).toEqual(['PORT']);
  });

  it('bounds scripts at 64 KiB of UTF-8 and refuses an empty one', async () => {
    const { deps } = catalogFakes();
    const justRight = 'a'.repeat(64 * 1024);
    await expect(
      createAction(deps, global, { ...newAction('a'), version: { version: '1.0.0', script: justRight } }),
    ).resolves.toBeDefined();
    const tooBig = 'é'.repeat(32 * 1024 + 1); // 2 bytes each
    expect(
      await fieldsOf(
        createAction(deps, global, {
          ...newAction('b'),
          version: { version: '1.0.0', script: tooBig, rollback_script: tooBig },
        }),
      ),
    ).toEqual(['version.script', 'version.rollback_script']);
    expect(
      await fieldsOf(createAction(deps, global, { ...newAction('c'), version: { version: '1.0.0', script: '  \n' } })),
    ).toEqual(['version.script']);
  });

  it('puts a tenant user’s actions in its tenant; another tenant answers 403, an unknown tenant 400', async () => {
    const { deps, tenants } = catalogFakes();
    expect((await createAction(deps, inA, newAction('a'))).tenant_id).toBe(TENANT_A);
    expect(
      (await createAction(deps, inA, newAction('b', { tenant_id: tenants.tenants.get(TENANT_A)?.shortId }))).tenant_id,
    ).toBe(TENANT_A);
    const other = await createAction(deps, inA, newAction('c', { tenant_id: TENANT_B })).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(ForbiddenError);
    expect((other as ForbiddenError).details).toEqual({ reason: 'tenant_restriction' });
    await expect(createAction(deps, inA, newAction('d', { tenant_id: null }))).rejects.toBeInstanceOf(ForbiddenError);
    expect(await fieldsOf(createAction(deps, global, newAction('e', { tenant_id: 'no-such-tenant' })))).toEqual([
      'tenant_id',
    ]);
    expect((await createAction(deps, global, newAction('f', { tenant_id: 't2' }))).tenant_id).toBe(TENANT_B);
  });
});

describe('reading actions', () => {
  const seed = async () => {
    const fakes = catalogFakes();
    const g = await createAction(fakes.deps, global, newAction('global-one'));
    fakes.clock.advance(1000);
    const a = await createAction(fakes.deps, inA, newAction('a-one'));
    fakes.clock.advance(1000);
    const b = await createAction(fakes.deps, inB, newAction('b-one'));
    return { ...fakes, g, a, b };
  };

  it('lists what the caller may see, oldest first, paginated; global callers may narrow to a tenant', async () => {
    const { deps } = await seed();
    const slugs = async (c = global, query = {}) =>
      (await listActions(deps, c, { page: 1, limit: 50, ...query })).data.map((a) => a.slug);
    expect(await slugs()).toEqual(['global-one', 'a-one', 'b-one']);
    expect(await slugs(inA)).toEqual(['global-one', 'a-one']);
    expect(await slugs(inA, { tenant_id: TENANT_B })).toEqual(['global-one', 'a-one']);
    expect(await slugs(global, { tenant_id: TENANT_B })).toEqual(['global-one', 'b-one']);
    const page = await listActions(deps, global, { page: 2, limit: 2 });
    expect(page.data.map((a) => a.slug)).toEqual(['b-one']);
    expect(page.meta).toEqual({ total: 3, page: 2, limit: 2, total_pages: 2, has_next: false, has_prev: true });
    expect(page.data[0]).not.toHaveProperty('versions');
  });

  it('gets by id or short id; another tenant’s action is 404, a global one is visible to tenants', async () => {
    const { deps, g, b } = await seed();
    expect((await getAction(deps, inA, g.short_id)).id).toBe(g.id);
    await expect(getAction(deps, inA, b.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(listVersions(deps, inA, b.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(getAction(deps, global, '00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('updateAction', () => {
  it('changes name and description only', async () => {
    const { deps, clock } = catalogFakes();
    const made = await createAction(deps, global, newAction());
    clock.advance(5000);
    const updated = await updateAction(deps, global, made.short_id, { name: 'Bounce nginx' });
    expect(updated).toMatchObject({
      slug: 'restart-nginx',
      name: 'Bounce nginx',
      description: null,
      updated_at: '2026-11-22T10:00:05.000Z',
      latest_version: '1.0.0',
    });
    expect(updated.versions).toHaveLength(1);
    expect((await updateAction(deps, global, made.id, { description: 'now described' })).name).toBe('Bounce nginx');
  });

  it('lets tenant users read but not change global actions (403), and hides other tenants’ (404)', async () => {
    const { deps } = catalogFakes();
    const g = await createAction(deps, global, newAction('g'));
    const b = await createAction(deps, inB, newAction('b'));
    await expect(updateAction(deps, inA, g.id, { name: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(deleteAction(deps, inA, g.id)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(createVersion(deps, inA, g.id, { version: '2.0.0', script: 'x' })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    await expect(updateAction(deps, inA, b.id, { name: 'x' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteAction(deps, inA, b.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('versions', () => {
  it('adds versions: latest_version and the order follow semver, not creation or text', async () => {
    const { deps } = catalogFakes();
    const made = await createAction(deps, global, newAction());
    for (const version of ['1.10.0', '1.9.0', '2.0.0-rc.1'])
      await createVersion(deps, global, made.id, { version, script: `echo ${version}` });
    const detail = await getAction(deps, global, made.id);
    expect(detail.latest_version).toBe('2.0.0-rc.1');
    expect(detail.versions.map((v) => v.version)).toEqual(['2.0.0-rc.1', '1.10.0', '1.9.0', '1.0.0']);
    expect((await listVersions(deps, global, made.short_id)).map((v) => v.version)).toEqual([
      '2.0.0-rc.1',
      '1.10.0',
      '1.9.0',
      '1.0.0',
    ]);
    expect((await getVersion(deps, global, made.id, 'v1.9.0')).script).toBe('echo 1.9.0');
    await expect(getVersion(deps, global, made.id, '3.0.0')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('answers 409 for an existing version (also written differently), 400 for a bad one, 404 for an unknown action', async () => {
    const { deps } = catalogFakes();
    const made = await createAction(deps, global, newAction());
    await expect(createVersion(deps, global, made.id, { version: 'v1.0.0', script: 'x' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(
      createVersion(deps, global, made.id, { version: '1.0.0+build.7', script: 'x' }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(await fieldsOf(createVersion(deps, global, made.id, { version: 'one', script: 'x' }))).toEqual(['version']);
    await expect(createVersion(deps, global, 'missing', { version: '1.0.1', script: 'x' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('updates a version’s fields and number: null clears, 409 when the number is taken, 400 when not semver', async () => {
    const { deps } = catalogFakes();
    const made = await createAction(deps, global, {
      ...newAction(),
      version: { version: '1.0.0', script: 'a', rollback_script: 'undo', timeout_seconds: 30 },
    });
    await createVersion(deps, global, made.id, { version: '1.1.0', script: 'b' });
    const updated = await updateVersion(deps, global, made.id, '1.0.0', {
      script: 'a2',
      interpreter: 'bash',
      rollback_script: null,
      changelog: 'fixed',
      variables: [{ name: 'X' }],
    });
    expect(updated).toMatchObject({
      version: '1.0.0',
      script: 'a2',
      interpreter: 'bash',
      rollback_script: null,
      timeout_seconds: 30,
      changelog: 'fixed',
      variables: [{ name: 'X' }],
    });
    await expect(updateVersion(deps, global, made.id, '1.0.0', { version: '1.1.0' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(await fieldsOf(updateVersion(deps, global, made.id, '1.0.0', { version: 'x.y' }))).toEqual(['version']);
    expect(await fieldsOf(updateVersion(deps, global, made.id, '1.0.0', { timeout_seconds: 0 }))).toEqual([
      'timeout_seconds',
    ]);
    await expect(updateVersion(deps, global, made.id, '9.9.9', { script: 'x' })).rejects.toBeInstanceOf(NotFoundError);

    const renumbered = await updateVersion(deps, global, made.id, '1.0.0', { version: '2.0.0' });
    expect(renumbered.id).toBe(updated.id);
    const detail = await getAction(deps, global, made.id);
    expect(detail.versions.map((v) => v.version)).toEqual(['2.0.0', '1.1.0']);
    expect(detail.latest_version).toBe('2.0.0');
  });

  it('deletes versions but never the last one (400); latest_version follows', async () => {
    const { deps } = catalogFakes();
    const made = await createAction(deps, global, newAction());
    await createVersion(deps, global, made.id, { version: '1.1.0', script: 'b' });
    await deleteVersion(deps, global, made.id, '1.1.0');
    expect((await getAction(deps, global, made.id)).latest_version).toBe('1.0.0');
    await expect(deleteVersion(deps, global, made.id, '1.1.0')).rejects.toBeInstanceOf(NotFoundError);
    const last = await deleteVersion(deps, global, made.id, '1.0.0').catch((e: unknown) => e);
    expect(last).toBeInstanceOf(ValidationError);
    expect((last as ValidationError).code).toBe('VALIDATION_ERROR');
    expect((await getAction(deps, global, made.id)).versions).toHaveLength(1);
  });

  it('keeps all versions of one action within 4 MiB', async () => {
    const { deps } = catalogFakes();
    const big = 'x'.repeat(64 * 1024 - 10);
    const made = await createAction(deps, global, {
      ...newAction(),
      version: { version: '1.0.0', script: big, rollback_script: big },
    });
    let refused: unknown;
    for (let minor = 1; minor < 40 && refused === undefined; minor += 1) {
      refused = await createVersion(deps, global, made.id, {
        version: `1.${minor}.0`,
        script: big,
        rollback_script: big,
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).fields[0]?.field).toBe('script');
    const total = JSON.stringify(await getAction(deps, global, made.id)).length;
    expect(total).toBeLessThanOrEqual(4 * 1024 * 1024 + 1024);
    expect(total).toBeGreaterThan(3.8 * 1024 * 1024);
  });
});

describe('deleting and references', () => {
  const withSequence = async (requirement: string | null) => {
    const fakes = catalogFakes();
    const action = await createAction(fakes.deps, global, newAction());
    await createVersion(fakes.deps, global, action.id, { version: '1.1.0', script: 'b' });
    await createVersion(fakes.deps, global, action.id, { version: '2.0.0', script: 'c' });
    const sequence = await createSequence(fakes.deps, global, {
      name: 'web',
      steps: [{ action_id: action.short_id, version_requirement: requirement }],
    });
    return { ...fakes, action, sequence };
  };

  it('deletes an action with all its versions', async () => {
    const { deps } = catalogFakes();
    const made = await createAction(deps, global, newAction());
    await createVersion(deps, global, made.id, { version: '1.1.0', script: 'b' });
    await deleteAction(deps, global, made.short_id);
    await expect(getAction(deps, global, made.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(deleteAction(deps, global, made.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(createAction(deps, global, newAction())).resolves.toBeDefined(); // the slug is free again
  });

  it('refuses to delete an action a sequence uses (409 naming it), and allows it once the sequence is gone', async () => {
    const { deps, action, sequence } = await withSequence(null);
    const refused = await deleteAction(deps, global, action.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).details).toEqual({ sequences: [{ id: sequence.id, name: 'web' }] });
    await deleteSequence(deps, global, sequence.id);
    await deleteAction(deps, global, action.id);
    await expect(getAction(deps, global, action.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses to delete or renumber the only version a sequence step needs (409), not one with a substitute', async () => {
    const { deps, action } = await withSequence('^1.0.0');
    await deleteVersion(deps, global, action.id, '1.0.0'); // 1.1.0 still satisfies ^1.0.0
    const refused = await deleteVersion(deps, global, action.id, '1.1.0').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).details).toMatchObject({
      steps: [{ sequence_name: 'web', order: 1, version_requirement: '^1.0.0' }],
    });
    await expect(updateVersion(deps, global, action.id, '1.1.0', { version: '3.0.0' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(updateVersion(deps, global, action.id, '1.1.0', { version: '1.2.0' })).resolves.toMatchObject({
      version: '1.2.0',
    });
    await deleteVersion(deps, global, action.id, '2.0.0'); // nothing needs it
  });

  it('retries a version write that lost a race, and gives up with 409 when it keeps losing', async () => {
    // Prepare: another version appears between this request's read and its write.
    const { deps, actions } = catalogFakes();
    const made = await createAction(deps, global, newAction());
    actions.beforeNextWrite = () => {
      const current = actions.actions.get(made.id)!;
      actions.actions.set(made.id, { ...current, revision: current.revision + 1 });
    };
    // Act + Assess: the second attempt reads the new revision and succeeds.
    await expect(createVersion(deps, global, made.id, { version: '1.1.0', script: 'b' })).resolves.toMatchObject({
      version: '1.1.0',
    });

    const bump = () => {
      const current = actions.actions.get(made.id)!;
      actions.actions.set(made.id, { ...current, revision: current.revision + 1 });
      actions.beforeNextWrite = bump;
    };
    actions.beforeNextWrite = bump;
    await expect(createVersion(deps, global, made.id, { version: '1.2.0', script: 'c' })).rejects.toBeInstanceOf(
      ConcurrentChangeError,
    );
    actions.beforeNextWrite = undefined;
    expect((await getAction(deps, global, made.id)).versions.map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);
  });
});
