// DynamoSolutionRepository against DynamoDB Local: sequence reference counts, the SolutionLookup port, and
// references from other contexts (solutionReference) that block a delete.
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAction } from '../../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../../domain/catalog/deps.js';
import { ConcurrentChangeError } from '../../../../domain/catalog/errors.js';
import { createSequence, deleteSequence } from '../../../../domain/catalog/sequences.js';
import { createSolution, deleteSolution, getSolution, updateSolution } from '../../../../domain/catalog/solutions.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { DynamoActionRepository } from '../../../../infra/dynamodb/action-repository.js';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { DynamoSequenceRepository } from '../../../../infra/dynamodb/sequence-repository.js';
import { DynamoSolutionRepository, solutionReference } from '../../../../infra/dynamodb/solution-repository.js';
import { DynamoTenantRepository } from '../../../../infra/dynamodb/tenant-repository.js';
import { systemClock } from '../../../../infra/system/clock.js';
import { catalogCaller } from '../../../fakes/catalog.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('solutions', { marshallOptions: { removeUndefinedValues: true } });
const solutions = new DynamoSolutionRepository(db, table);
const deps: CatalogDeps = {
  actions: new DynamoActionRepository(db, table),
  sequences: new DynamoSequenceRepository(db, table),
  solutions,
  tenants: new DynamoTenantRepository(db, table),
  ids: new DynamoIdGenerator(db, table, {
    alphabet: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    minLength: 6,
  }),
  clock: systemClock,
};
const admin = catalogCaller();

let counter = 0;
const aSequence = async () => {
  counter += 1;
  const action = await createAction(deps, admin, {
    slug: `action-${counter}`,
    name: 'a',
    version: { version: '1.0.0', script: 'echo' },
  });
  return createSequence(deps, admin, { name: `sequence ${counter}`, steps: [{ action_id: action.id }] });
};
const refCountOf = async (sequenceId: string) => (await deps.sequences.find(sequenceId))?.refCount;

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoSolutionRepository', () => {
  it('creates a solution found by id, short id and the lookup port, counting its sequences once each', async () => {
    // Prepare
    const first = await aSequence();
    const second = await aSequence();
    // Act
    const solution = await createSolution(deps, admin, {
      name: 'platform',
      sequences: [{ sequence_id: first.short_id }, { sequence_id: second.id }, { sequence_id: first.id }],
    });
    // Assess
    expect(await getSolution(deps, admin, solution.short_id)).toEqual(solution);
    expect(await solutions.findSolution(solution.short_id)).toEqual({
      id: solution.id,
      shortId: solution.short_id,
      name: 'platform',
      tenantId: null,
    });
    expect(await solutions.findSolution('nope')).toBeUndefined();
    expect([await refCountOf(first.id), await refCountOf(second.id)]).toEqual([1, 1]);
    expect((await solutions.listAll()).map((s) => s.id)).toContain(solution.id);
  });

  it('writes nothing when a sequence vanished meanwhile', async () => {
    const gone = { id: '5e000000-0000-4000-8000-0000000000ff', delta: 1 as const };
    const solution = {
      id: '50000000-0000-4000-8000-000000000001',
      shortId: 'sol-stale',
      name: 's',
      description: null,
      version: '1.0.0',
      tenantId: null,
      sequences: [{ order: 1, sequenceId: gone.id }],
      revision: 1,
      refCount: 0,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    await expect(solutions.create(solution, [gone])).rejects.toBeInstanceOf(ConcurrentChangeError);
    expect(await solutions.find(solution.id)).toBeUndefined();
    expect(await solutions.find('sol-stale')).toBeUndefined();
  });

  it('moves sequence references on update and releases them on delete', async () => {
    const first = await aSequence();
    const second = await aSequence();
    const solution = await createSolution(deps, admin, { name: 's', sequences: [{ sequence_id: first.id }] });
    await expect(deleteSequence(deps, admin, first.id)).rejects.toBeInstanceOf(ConflictError);
    await updateSolution(deps, admin, solution.id, { sequences: [{ sequence_id: second.id }] });
    expect([await refCountOf(first.id), await refCountOf(second.id)]).toEqual([0, 1]);
    await deleteSequence(deps, admin, first.id);
    await deleteSolution(deps, admin, solution.id);
    expect(await refCountOf(second.id)).toBe(0);
    await expect(getSolution(deps, admin, solution.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      createSolution(deps, admin, { name: 's', sequences: [{ sequence_id: first.id }] }),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('is not deleted while another record references it (solutionReference)', async () => {
    const solution = await createSolution(deps, admin, {
      name: 'frozen',
      sequences: [{ sequence_id: (await aSequence()).id }],
    });
    await db.send(new TransactWriteCommand({ TransactItems: [solutionReference(table, solution.id, 1)] }));
    await expect(deleteSolution(deps, admin, solution.id)).rejects.toBeInstanceOf(ConflictError);
    await db.send(new TransactWriteCommand({ TransactItems: [solutionReference(table, solution.id, -1)] }));
    await deleteSolution(deps, admin, solution.id);
    await expect(
      db.send(new TransactWriteCommand({ TransactItems: [solutionReference(table, solution.id, 1)] })),
    ).rejects.toThrow();
  });
});
