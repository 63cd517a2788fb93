import { describe, expect, it } from 'vitest';
import { createAction } from '../../../../domain/catalog/actions.js';
import { createSequence, deleteSequence } from '../../../../domain/catalog/sequences.js';
import {
  createSolution,
  deleteSolution,
  getSolution,
  listSolutions,
  updateSolution,
} from '../../../../domain/catalog/solutions.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { ForbiddenError } from '../../../../domain/identity/errors.js';
import { catalogCaller as caller, catalogFakes, TENANT_A, TENANT_B } from '../../../fakes/catalog.js';

const global = caller();
const inA = caller(TENANT_A);

const seed = async () => {
  const fakes = catalogFakes();
  const action = await createAction(fakes.deps, global, {
    slug: 'web',
    name: 'web',
    version: { version: '1.0.0', script: 'echo' },
  });
  const sequence = (name: string, who = global) =>
    createSequence(fakes.deps, who, { name, steps: [{ action_id: action.id }] });
  const first = await sequence('first');
  const second = await sequence('second');
  const ofA = await sequence('of-a', inA);
  const ofB = await sequence('of-b', caller(TENANT_B));
  const refCount = (id: string) => fakes.sequences.sequences.get(id)?.refCount;
  return { ...fakes, first, second, ofA, ofB, refCount };
};

describe('solutions', () => {
  it('creates a solution of sequences by id or short id and counts the sequences’ users', async () => {
    const { deps, first, second, refCount } = await seed();
    const solution = await createSolution(deps, global, {
      name: 'Platform',
      description: 'all',
      sequences: [{ sequence_id: second.short_id }, { sequence_id: first.id }, { sequence_id: second.id }],
    });
    expect(solution).toMatchObject({ name: 'Platform', description: 'all', version: '1.0.0', tenant_id: null });
    expect(solution.sequences).toEqual([
      { order: 1, sequence_id: second.id },
      { order: 2, sequence_id: first.id },
      { order: 3, sequence_id: second.id },
    ]);
    expect([refCount(first.id), refCount(second.id)]).toEqual([1, 1]);
    expect((await getSolution(deps, global, solution.short_id)).id).toBe(solution.id);
    expect(await deps.solutions.findSolution(solution.short_id)).toEqual({
      id: solution.id,
      shortId: solution.short_id,
      name: 'Platform',
      tenantId: null,
    });
  });

  it('names bad entries and applies the scope rule', async () => {
    const { deps, first, ofA, ofB } = await seed();
    const bad = await createSolution(deps, global, {
      name: 's',
      sequences: [{ sequence_id: 'nope' }, { sequence_id: ofA.id }],
    }).then(
      () => undefined,
      (e: ValidationError) => e,
    );
    expect(bad).toBeInstanceOf(ValidationError);
    if (bad === undefined) return;
    expect(bad.fields.map((f) => f.field)).toEqual(['sequences.0.sequence_id', 'sequences.1.sequence_id']);
    await expect(
      createSolution(deps, inA, { name: 's', sequences: [{ sequence_id: first.id }, { sequence_id: ofA.id }] }),
    ).resolves.toMatchObject({ tenant_id: TENANT_A });
    await expect(createSolution(deps, inA, { name: 's', sequences: [{ sequence_id: ofB.id }] })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(createSolution(deps, inA, { name: 's', sequences: [] })).rejects.toBeInstanceOf(ValidationError);
  });

  it('updates entries and moves reference counts; deletes and releases them; sequences become deletable', async () => {
    const { deps, first, second, refCount } = await seed();
    const solution = await createSolution(deps, global, { name: 's', sequences: [{ sequence_id: first.id }] });
    const updated = await updateSolution(deps, global, solution.id, {
      name: 'renamed',
      sequences: [{ sequence_id: second.id }],
      version: '3.0.0',
    });
    expect(updated).toMatchObject({
      name: 'renamed',
      version: '3.0.0',
      sequences: [{ order: 1, sequence_id: second.id }],
    });
    expect([refCount(first.id), refCount(second.id)]).toEqual([0, 1]);
    await deleteSequence(deps, global, first.id);
    await expect(deleteSequence(deps, global, second.id)).rejects.toBeInstanceOf(ConflictError);
    await deleteSolution(deps, global, solution.short_id);
    expect(refCount(second.id)).toBe(0);
    await expect(getSolution(deps, global, solution.id)).rejects.toBeInstanceOf(NotFoundError);
    await deleteSequence(deps, global, second.id);
  });

  it('refuses to delete a solution other records reference', async () => {
    const { deps, solutions, first } = await seed();
    const solution = await createSolution(deps, global, { name: 's', sequences: [{ sequence_id: first.id }] });
    solutions.solutions.set(solution.id, { ...solutions.solutions.get(solution.id)!, refCount: 1 });
    await expect(deleteSolution(deps, global, solution.id)).rejects.toBeInstanceOf(ConflictError);
  });

  it('lists and hides by tenant; tenant users cannot change global solutions', async () => {
    const { deps, first, ofA } = await seed();
    const g = await createSolution(deps, global, { name: 'global', sequences: [{ sequence_id: first.id }] });
    const a = await createSolution(deps, inA, { name: 'of-a', sequences: [{ sequence_id: ofA.id }] });
    expect((await listSolutions(deps, caller(TENANT_B), { page: 1, limit: 50 })).data.map((s) => s.name)).toEqual([
      'global',
    ]);
    expect((await listSolutions(deps, global, { page: 1, limit: 50 })).data.map((s) => s.name)).toEqual([
      'global',
      'of-a',
    ]);
    await expect(getSolution(deps, caller(TENANT_B), a.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(updateSolution(deps, inA, g.id, { name: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
    await expect(deleteSolution(deps, inA, g.id)).rejects.toBeInstanceOf(ForbiddenError);
  });
});
