import { describe, expect, it } from 'vitest';
import { createAction, createVersion } from '../../../../domain/catalog/actions.js';
import {
  createSequence,
  deleteSequence,
  getSequence,
  listSequences,
  updateSequence,
} from '../../../../domain/catalog/sequences.js';
import { createSolution } from '../../../../domain/catalog/solutions.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { ForbiddenError } from '../../../../domain/identity/errors.js';
import { catalogCaller as caller, catalogFakes, TENANT_A, TENANT_B } from '../../../fakes/catalog.js';

const global = caller();
const inA = caller(TENANT_A);

const fieldsOf = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fields.map((f) => f.field);
};

/** A global action (versions 1.0.0 and 1.2.0), one of tenant A and one of tenant B. */
const seed = async () => {
  const fakes = catalogFakes();
  const action = (slug: string, who = global) =>
    createAction(fakes.deps, who, { slug, name: slug, version: { version: '1.0.0', script: `echo ${slug}` } });
  const web = await action('web');
  await createVersion(fakes.deps, global, web.id, { version: '1.2.0', script: 'echo web 1.2' });
  const db = await action('db');
  const ownA = await action('own-a', inA);
  const ownB = await action('own-b', caller(TENANT_B));
  const refCount = (id: string) => fakes.actions.actions.get(id)?.refCount;
  return { ...fakes, web, db, ownA, ownB, refCount };
};

describe('createSequence', () => {
  it('stores steps with action UUIDs in array order, version 1.0.0, and counts the actions’ users', async () => {
    // Prepare
    const { deps, web, db, refCount, actions } = await seed();
    const revisionBefore = actions.actions.get(web.id)?.revision as number;
    // Act
    const sequence = await createSequence(deps, global, {
      name: 'Deploy web',
      steps: [
        { action_id: web.short_id, version_requirement: '^1.0.0' },
        { action_id: db.id },
        { action_id: web.id, version_requirement: '1.0.0' },
      ],
    });
    // Assess
    expect(sequence).toMatchObject({ name: 'Deploy web', description: null, version: '1.0.0', tenant_id: null });
    expect(sequence.steps).toEqual([
      { order: 1, action_id: web.id, version_requirement: '^1.0.0' },
      { order: 2, action_id: db.id, version_requirement: null },
      { order: 3, action_id: web.id, version_requirement: '1.0.0' },
    ]);
    expect([refCount(web.id), refCount(db.id)]).toEqual([1, 1]); // one sequence, however many steps
    expect(actions.actions.get(web.id)?.revision).toBe(revisionBefore + 1);
    expect((await getSequence(deps, global, sequence.short_id)).id).toBe(sequence.id);
  });

  it('sorts steps by the orders given, which must be 1..n, unique, on every step', async () => {
    const { deps, web, db } = await seed();
    const sorted = await createSequence(deps, global, {
      name: 's',
      version: 'v2.0.0',
      steps: [
        { order: 2, action_id: web.id },
        { order: 1, action_id: db.id },
      ],
    });
    expect(sorted.steps.map((s) => [s.order, s.action_id])).toEqual([
      [1, db.id],
      [2, web.id],
    ]);
    expect(sorted.version).toBe('2.0.0');
    expect(
      await fieldsOf(
        createSequence(deps, global, {
          name: 's',
          steps: [
            { order: 1, action_id: web.id },
            { order: 1, action_id: db.id },
          ],
        }),
      ),
    ).toEqual(['steps.1.order']);
    expect(
      await fieldsOf(
        createSequence(deps, global, {
          name: 's',
          steps: [
            { order: 1, action_id: web.id },
            { order: 3, action_id: db.id },
          ],
        }),
      ),
    ).toEqual(['steps.1.order']);
    expect(
      await fieldsOf(
        createSequence(deps, global, { name: 's', steps: [{ order: 1, action_id: web.id }, { action_id: db.id }] }),
      ),
    ).toEqual(['steps.1.order']);
    expect(await fieldsOf(createSequence(deps, global, { name: 's', steps: [] }))).toEqual(['steps']);
    expect(
      await fieldsOf(createSequence(deps, global, { name: 's', version: '1', steps: [{ action_id: web.id }] })),
    ).toEqual(['version']);
  });

  it('names each bad step: unknown action, invalid range, a range no version satisfies', async () => {
    const { deps, web, refCount } = await seed();
    const problems = await createSequence(deps, global, {
      name: 's',
      steps: [
        { action_id: 'nope' },
        { action_id: web.id, version_requirement: 'newest' },
        { action_id: web.id, version_requirement: '^2.0.0' },
        { action_id: web.id, version_requirement: '~1.2' },
      ],
    }).then(
      () => undefined,
      (e: ValidationError) => e,
    );
    expect(problems).toBeInstanceOf(ValidationError);
    if (problems === undefined) return;
    expect(problems.code).toBe('VALIDATION_ERROR');
    expect(problems.fields.map((f) => f.field)).toEqual([
      'steps.0.action_id',
      'steps.1.version_requirement',
      'steps.2.version_requirement',
    ]);
    expect(problems.fields[2]?.message).toContain('1.2.0, 1.0.0');
    expect(refCount(web.id)).toBe(0);
  });

  it('lets a tenant’s sequence use global actions and its own, a global one only global actions', async () => {
    const { deps, web, ownA, ownB } = await seed();
    await expect(
      createSequence(deps, inA, { name: 's', steps: [{ action_id: web.id }, { action_id: ownA.id }] }),
    ).resolves.toMatchObject({ tenant_id: TENANT_A });
    expect(await fieldsOf(createSequence(deps, inA, { name: 's', steps: [{ action_id: ownB.id }] }))).toEqual([
      'steps.0.action_id',
    ]);
    expect(await fieldsOf(createSequence(deps, global, { name: 's', steps: [{ action_id: ownA.id }] }))).toEqual([
      'steps.0.action_id',
    ]);
    await expect(
      createSequence(deps, global, { name: 's', tenant_id: TENANT_A, steps: [{ action_id: ownA.id }] }),
    ).resolves.toMatchObject({ tenant_id: TENANT_A });
    await expect(
      createSequence(deps, inA, { name: 's', tenant_id: TENANT_B, steps: [{ action_id: web.id }] }),
    ).rejects.toBeInstanceOf(ForbiddenError);
  });
});

describe('updating, listing and deleting sequences', () => {
  it('replaces steps and moves the reference counts; other fields alone leave them', async () => {
    const { deps, web, db, refCount, clock } = await seed();
    const sequence = await createSequence(deps, global, { name: 's', steps: [{ action_id: web.id }] });
    clock.advance(1000);
    const renamed = await updateSequence(deps, global, sequence.id, {
      name: 'renamed',
      description: 'd',
      version: '1.1.0',
    });
    expect(renamed).toMatchObject({
      name: 'renamed',
      description: 'd',
      version: '1.1.0',
      steps: sequence.steps,
      updated_at: '2026-11-22T10:00:01.000Z',
    });
    expect([refCount(web.id), refCount(db.id)]).toEqual([1, 0]);
    const moved = await updateSequence(deps, global, sequence.short_id, { steps: [{ action_id: db.id }] });
    expect(moved.steps).toEqual([{ order: 1, action_id: db.id, version_requirement: null }]);
    expect([refCount(web.id), refCount(db.id)]).toEqual([0, 1]);
    expect(
      await fieldsOf(
        updateSequence(deps, global, sequence.id, { steps: [{ action_id: web.id, version_requirement: '>5' }] }),
      ),
    ).toEqual(['steps.0.version_requirement']);
  });

  it('lists and hides by tenant; tenant users cannot change global sequences', async () => {
    const { deps, web, ownA } = await seed();
    const g = await createSequence(deps, global, { name: 'global', steps: [{ action_id: web.id }] });
    const a = await createSequence(deps, inA, { name: 'of-a', steps: [{ action_id: ownA.id }] });
    const names = async (c = global, tenant_id?: string) =>
      (await listSequences(deps, c, { page: 1, limit: 50, tenant_id })).data.map((s) => s.name);
    expect(await names()).toEqual(['global', 'of-a']);
    expect(await names(caller(TENANT_B))).toEqual(['global']);
    expect(await names(global, TENANT_B)).toEqual(['global']);
    await expect(getSequence(deps, caller(TENANT_B), a.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(updateSequence(deps, inA, g.id, { name: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(deleteSequence(deps, inA, g.id)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(updateSequence(deps, inA, a.id, { name: 'mine' })).resolves.toMatchObject({ name: 'mine' });
  });

  it('deletes a sequence and releases its actions, but not while a solution uses it (409 naming it)', async () => {
    const { deps, web, refCount } = await seed();
    const sequence = await createSequence(deps, global, { name: 's', steps: [{ action_id: web.id }] });
    const solution = await createSolution(deps, global, {
      name: 'platform',
      sequences: [{ sequence_id: sequence.id }],
    });
    const refused = await deleteSequence(deps, global, sequence.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).details).toEqual({ solutions: [{ id: solution.id, name: 'platform' }] });
    expect(refCount(web.id)).toBe(1);
  });

  it('deletes an unused sequence', async () => {
    const { deps, web, refCount } = await seed();
    const sequence = await createSequence(deps, global, { name: 's', steps: [{ action_id: web.id }] });
    await deleteSequence(deps, global, sequence.short_id);
    expect(refCount(web.id)).toBe(0);
    await expect(getSequence(deps, global, sequence.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});
