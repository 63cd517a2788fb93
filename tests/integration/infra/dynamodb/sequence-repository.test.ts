// DynamoSequenceRepository against DynamoDB Local, and the catalog's reference rules under real concurrency:
// a sequence write and an action delete (or a version delete) racing each other never leave a dangling step.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createAction,
  createVersion,
  deleteAction,
  deleteVersion,
  getAction,
} from '../../../../domain/catalog/actions.js';
import type { CatalogDeps } from '../../../../domain/catalog/deps.js';
import { ConcurrentChangeError } from '../../../../domain/catalog/errors.js';
import { createSequence, deleteSequence, getSequence, updateSequence } from '../../../../domain/catalog/sequences.js';
import { createSolution } from '../../../../domain/catalog/solutions.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../../domain/errors.js';
import { DynamoActionRepository } from '../../../../infra/dynamodb/action-repository.js';
import { DynamoIdGenerator } from '../../../../infra/dynamodb/id-generator.js';
import { DynamoSequenceRepository } from '../../../../infra/dynamodb/sequence-repository.js';
import { DynamoSolutionRepository } from '../../../../infra/dynamodb/solution-repository.js';
import { DynamoTenantRepository } from '../../../../infra/dynamodb/tenant-repository.js';
import { systemClock } from '../../../../infra/system/clock.js';
import { catalogCaller } from '../../../fakes/catalog.js';
import { createServiceTable, serviceTableFixture } from '../../../support/aws.js';

const { table, client, db } = serviceTableFixture('sequences', { marshallOptions: { removeUndefinedValues: true } });
const deps: CatalogDeps = {
  actions: new DynamoActionRepository(db, table),
  sequences: new DynamoSequenceRepository(db, table),
  solutions: new DynamoSolutionRepository(db, table),
  tenants: new DynamoTenantRepository(db, table),
  ids: new DynamoIdGenerator(db, table, {
    alphabet: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
    minLength: 6,
  }),
  clock: systemClock,
};
const admin = catalogCaller();

let counter = 0;
const anAction = async (versions: string[] = ['1.0.0']) => {
  counter += 1;
  const [first, ...rest] = versions;
  const made = await createAction(deps, admin, {
    slug: `action-${counter}`,
    name: `Action ${counter}`,
    version: { version: first!, script: 'echo' },
  });
  for (const version of rest) await createVersion(deps, admin, made.id, { version, script: `echo ${version}` });
  return made;
};
const stored = async (id: string) => (await deps.actions.find(id))!.action;

beforeAll(async () => {
  await createServiceTable(client, table);
});

describe('DynamoSequenceRepository', () => {
  it('creates a sequence that counts as a user of its actions and moves their revisions', async () => {
    // Prepare
    const web = await anAction();
    const db2 = await anAction();
    const before = await stored(web.id);
    // Act
    const sequence = await createSequence(deps, admin, {
      name: 'deploy',
      steps: [{ action_id: web.short_id }, { action_id: db2.id, version_requirement: '^1' }, { action_id: web.id }],
    });
    // Assess
    expect(await getSequence(deps, admin, sequence.short_id)).toEqual(sequence);
    expect(await stored(web.id)).toMatchObject({ refCount: 1, revision: before.revision + 1 });
    expect((await stored(db2.id)).refCount).toBe(1);
    expect((await deps.sequences.listUsingAction(web.id)).map((s) => s.id)).toEqual([sequence.id]);
    expect((await deps.sequences.listAll()).map((s) => s.id)).toContain(sequence.id);
  });

  it('writes nothing when an action changed since it was read', async () => {
    const web = await anAction();
    const seen = await stored(web.id);
    await createVersion(deps, admin, web.id, { version: '1.1.0', script: 'echo' }); // moves the revision
    const sequence = {
      id: '5e000000-0000-4000-8000-000000000001',
      shortId: 'stale1',
      name: 's',
      description: null,
      version: '1.0.0',
      tenantId: null,
      steps: [{ order: 1, actionId: web.id, versionRequirement: null }],
      revision: 1,
      refCount: 0,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    };
    await expect(
      deps.sequences.create(sequence, [{ id: web.id, delta: 1, revision: seen.revision }]),
    ).rejects.toBeInstanceOf(ConcurrentChangeError);
    expect(await deps.sequences.find(sequence.id)).toBeUndefined();
    expect(await deps.sequences.find('stale1')).toBeUndefined();
    expect((await stored(web.id)).refCount).toBe(0);
  });

  it('moves references on update, keeps the solutions’ count, and deletes only unused sequences', async () => {
    const a = await anAction();
    const b = await anAction();
    const sequence = await createSequence(deps, admin, { name: 's', steps: [{ action_id: a.id }] });
    const stale = (await deps.sequences.find(sequence.id))!;
    const solution = await createSolution(deps, admin, { name: 'sol', sequences: [{ sequence_id: sequence.id }] });

    await updateSequence(deps, admin, sequence.id, { steps: [{ action_id: b.id }] });
    expect([(await stored(a.id)).refCount, (await stored(b.id)).refCount]).toEqual([0, 1]);
    expect((await deps.sequences.find(sequence.id))?.refCount).toBe(1);
    await expect(
      deps.sequences.update(stale, { ...stale, name: 'late', revision: stale.revision + 1 }, []),
    ).rejects.toBeInstanceOf(ConcurrentChangeError);

    await expect(deleteSequence(deps, admin, sequence.id)).rejects.toBeInstanceOf(ConflictError);
    await deps.solutions.delete((await deps.solutions.find(solution.id))!, [{ id: sequence.id, delta: -1 }]);
    await deleteSequence(deps, admin, sequence.id);
    expect((await stored(b.id)).refCount).toBe(0);
    await deleteAction(deps, admin, b.id);
  });
});

describe('references under concurrency', () => {
  it('an action delete racing a sequence create: either the sequence exists and the action too, or neither', async () => {
    for (let round = 0; round < 6; round += 1) {
      // Prepare
      const action = await anAction();
      // Act
      const [created, deleted] = await Promise.allSettled([
        createSequence(deps, admin, { name: `race ${round}`, steps: [{ action_id: action.id }] }),
        deleteAction(deps, admin, action.id),
      ]);
      // Assess
      const actionLeft = await deps.actions.find(action.id);
      if (created.status === 'fulfilled') {
        expect(deleted.status).toBe('rejected');
        expect((deleted as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
        expect(actionLeft?.action.refCount).toBe(1);
        await deleteSequence(deps, admin, created.value.id);
        await deleteAction(deps, admin, action.id);
      } else {
        expect(created.reason).toBeInstanceOf(ValidationError);
        expect(deleted.status).toBe('fulfilled');
        expect(actionLeft).toBeUndefined();
      }
    }
  });

  it('a version delete racing a sequence that needs it: the step always keeps a satisfying version', async () => {
    for (let round = 0; round < 6; round += 1) {
      const action = await anAction(['1.0.0', '2.0.0']);
      const [created, deleted] = await Promise.allSettled([
        createSequence(deps, admin, {
          name: `needs 2 (${round})`,
          steps: [{ action_id: action.id, version_requirement: '^2' }],
        }),
        deleteVersion(deps, admin, action.id, '2.0.0'),
      ]);
      const versions = (await getAction(deps, admin, action.id)).versions.map((v) => v.version);
      if (created.status === 'fulfilled') {
        expect(versions).toContain('2.0.0');
        expect((deleted as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
      } else {
        expect(created.reason).toBeInstanceOf(ValidationError);
        expect(versions).toEqual(['1.0.0']);
      }
    }
  });

  it('concurrent version creates on one action retry from the new revision: each lands or says 409, none is lost', async () => {
    const action = await anAction();
    const wanted = ['1.1.0', '1.2.0', '1.3.0'];
    const results = await Promise.allSettled(
      wanted.map((version) => createVersion(deps, admin, action.id, { version, script: 'echo' })),
    );
    const detail = await getAction(deps, admin, action.id);
    const landed = wanted.filter((_, i) => results[i]?.status === 'fulfilled');
    expect(landed.length).toBeGreaterThanOrEqual(2); // three attempts each: normally all three
    expect(detail.versions.map((v) => v.version).sort()).toEqual(['1.0.0', ...landed]);
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ConcurrentChangeError);
    expect(detail.latest_version).toBe(detail.versions[0]?.version);
    await expect(getSequence(deps, admin, 'missing')).rejects.toBeInstanceOf(NotFoundError);
  });
});
