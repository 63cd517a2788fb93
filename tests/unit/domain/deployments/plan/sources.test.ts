import { describe, expect, it } from 'vitest';
import { createSolution } from '../../../../../domain/catalog/solutions.js';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { catalogCaller, TENANT_A, TENANT_B } from '../../../../fakes/catalog.js';
import { admin, ENV_B, fieldsOf, NOW, rejection, stepsOf, tenantUser, world } from './world.js';

describe('source: an action', () => {
  it('is one step per target, sequence_order and action_order 1, its latest version when no requirement', async () => {
    // Prepare
    const w = world();
    const restart = await w.action('Restart', ['1.0.0', '1.10.0', '1.2.0']);
    w.target('web-2', { tags: [{ key: 'role', value: 'web' }] });
    w.target('web-1', { tags: [{ key: 'role', value: 'web' }] });
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: restart.short_id,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    // Assess
    expect(stepsOf(resolved)).toEqual([
      ['web-1', null, 1, 'Restart', 1, '1.10.0'],
      ['web-2', null, 1, 'Restart', 1, '1.10.0'],
    ]);
    const { draft } = resolved;
    expect([draft.sourceType, draft.action, draft.sequence, draft.solution]).toEqual([
      'action',
      { id: restart.id, name: 'Restart', version: '1.10.0' },
      null,
      null,
    ]);
    expect(draft.plan.steps[0]).toMatchObject({
      id: 'step-1',
      sequenceId: null,
      actionId: restart.id,
      actionSlug: restart.slug,
      state: 'pending',
      retryCount: 0,
      exitCode: null,
      startedAt: null,
    });
    expect(draft.plan.targetCount).toBe(2);
    expect(draft.plan.createdAt).toBe(NOW.toISOString());
    expect(draft.triggeredBy).toBe('admin-user');
  });

  it('runs the newest version satisfying version_requirement (caret, tilde, exact, comparison ranges)', async () => {
    // Prepare
    const w = world();
    const restart = await w.action('Restart', ['1.0.0', '1.2.0', '1.10.0', '2.0.0', '2.1.0-beta.1']);
    w.target('web-1');
    const versionFor = async (version_requirement: string) =>
      (await resolveDeployment(w.deps, admin, { action_id: restart.id, target_ids: ['tg1'], version_requirement }))
        .draft.plan.steps[0]?.actionVersion;
    // Act + Assess
    expect(await versionFor('^1.0.0')).toBe('1.10.0');
    expect(await versionFor('~1.2')).toBe('1.2.0');
    expect(await versionFor('1.0.0')).toBe('1.0.0');
    expect(await versionFor('>=1.1 <2')).toBe('1.10.0');
    expect(await versionFor('^2')).toBe('2.0.0');
    const latest = await resolveDeployment(w.deps, admin, { action_id: restart.id, target_ids: ['tg1'] });
    expect(latest.draft.action?.version).toBe('2.1.0-beta.1');
    expect(latest.draft.config.versionRequirement).toBeNull();
  });

  it('answers 400 on version_requirement naming the action when no version satisfies it, or when it is not a range', async () => {
    // Prepare
    const w = world();
    const restart = await w.action('Restart nginx', ['1.0.0', '1.1.0']);
    w.target('web-1');
    // Act
    const none = await rejection(
      resolveDeployment(w.deps, admin, { action_id: restart.id, target_ids: ['tg1'], version_requirement: '^3' }),
    );
    const notRange = await rejection(
      resolveDeployment(w.deps, admin, { action_id: restart.id, target_ids: ['tg1'], version_requirement: 'newest' }),
    );
    // Assess
    expect([none.code, fieldsOf(none)]).toEqual(['VALIDATION_ERROR', ['version_requirement']]);
    expect(none.message).toContain("'Restart nginx'");
    expect(none.message).toContain('latest is 1.1.0');
    expect([notRange.code, fieldsOf(notRange)]).toEqual(['VALIDATION_ERROR', ['version_requirement']]);
    expect(notRange.message).toContain('not a version range');
  });

  it('answers 400 on action_id for a missing action and for another tenant’s (as missing)', async () => {
    // Prepare
    const w = world();
    const ofB = await w.action('B only', ['1.0.0'], TENANT_B);
    w.target('g-1');
    w.target('a-1', { tenantId: TENANT_A });
    // Act
    const missing = await rejection(resolveDeployment(w.deps, admin, { action_id: 'nope', target_ids: ['tg1'] }));
    const otherTenant = await rejection(
      resolveDeployment(w.deps, tenantUser(TENANT_A), { action_id: ofB.id, target_ids: ['tg2'] }),
    );
    // Assess
    expect([missing.code, fieldsOf(missing), missing.message]).toEqual([
      'VALIDATION_ERROR',
      ['action_id'],
      expect.stringContaining("'nope' does not exist"),
    ]);
    expect([otherTenant.code, fieldsOf(otherTenant), otherTenant.message]).toEqual([
      'VALIDATION_ERROR',
      ['action_id'],
      expect.stringContaining('does not exist'),
    ]);
  });

  it('a tenant’s action deploys only in that tenant: a global caller without tenant_id, or with another tenant, gets a 400 saying so', async () => {
    // Prepare
    const w = world();
    const ofA = await w.action('A only', ['1.0.0'], TENANT_A);
    w.target('g-1');
    w.target('b-1', { tenantId: TENANT_B, environmentId: ENV_B });
    // Act
    const error = await rejection(resolveDeployment(w.deps, admin, { action_id: ofA.id, target_ids: ['tg1'] }));
    const inB = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: ofA.id,
        target_ids: ['tg2'],
        tenant_id: TENANT_B,
        environment_id: ENV_B,
      }),
    );
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['action_id']]);
    expect(error.message).toContain('belongs to a tenant');
    expect([inB.code, fieldsOf(inB)]).toEqual(['VALIDATION_ERROR', ['action_id']]);
    expect(inB.message).toContain("'A only' belongs to another tenant than the deployment");
  });

  it('a tenant may deploy global actions', async () => {
    // Prepare
    const w = world();
    const global = await w.action('Global', ['1.0.0']);
    w.target('a-1', { tenantId: TENANT_A });
    // Act
    const resolved = await resolveDeployment(w.deps, tenantUser(TENANT_A), {
      action_id: global.id,
      target_ids: ['tg1'],
    });
    // Assess
    expect(resolved.draft.tenantId).toBe(TENANT_A);
    expect(stepsOf(resolved)).toEqual([['a-1', null, 1, 'Global', 1, '1.0.0']]);
  });
});

describe('source: a sequence', () => {
  it('expands to its steps in order, each with its own requirement; the body’s version_requirement is ignored (warned)', async () => {
    // Prepare
    const w = world();
    const stop = await w.action('Stop', ['1.0.0', '1.5.0', '2.0.0']);
    const start = await w.action('Start', ['0.9.0', '1.0.0']);
    const seq = await w.sequence('Release', [
      { action_id: start.id, order: 2 },
      { action_id: stop.short_id, version_requirement: '^1', order: 1 },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      sequence_id: seq.short_id,
      target_ids: ['tg1'],
      version_requirement: '^9',
    });
    // Assess
    expect(stepsOf(resolved)).toEqual([
      ['web-1', 'Release', 1, 'Stop', 1, '1.5.0'],
      ['web-1', 'Release', 1, 'Start', 2, '1.0.0'],
    ]);
    expect(resolved.draft.plan.steps[0]?.sequenceId).toBe(seq.id);
    expect([
      resolved.draft.sourceType,
      resolved.draft.sequence,
      resolved.draft.action,
      resolved.draft.solution,
    ]).toEqual(['sequence', { id: seq.id, name: 'Release', version: '2.1.0' }, null, null]);
    expect(resolved.warnings).toContain(
      'version_requirement is ignored for a sequence: each step uses its own requirement.',
    );
  });

  it('answers 400 on sequence_id naming the step and action when no version satisfies a step any more', async () => {
    // Prepare: a step whose requirement no version meets (the catalog prevents it; a stored record may still say so)
    const w = world();
    const stop = await w.action('Stop', ['1.0.0']);
    const seq = await w.sequence('Release', [{ action_id: stop.id }]);
    const stored = w.catalog.sequences.sequences.get(seq.id)!;
    w.catalog.sequences.sequences.set(seq.id, {
      ...stored,
      steps: [{ order: 1, actionId: stop.id, versionRequirement: '^5' }],
    });
    w.target('web-1');
    // Act
    const error = await rejection(resolveDeployment(w.deps, admin, { sequence_id: seq.id, target_ids: ['tg1'] }));
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['sequence_id']]);
    expect(error.message).toContain("Step 1 of sequence 'Release': no version of action 'Stop' satisfies '^5'");
  });
});

describe('source: a solution', () => {
  it('expands to its sequences in the solution’s order, each to its steps, target by target', async () => {
    // Prepare
    const w = world();
    const a = await w.action('A', ['1.0.0']);
    const b = await w.action('B', ['1.0.0', '1.1.0']);
    const c = await w.action('C', ['3.0.0']);
    const first = await w.sequence('First', [{ action_id: a.id }, { action_id: b.id, version_requirement: '~1.0.0' }]);
    const second = await w.sequence('Second', [{ action_id: c.id }]);
    const solution = await createSolution(w.catalog.deps, catalogCaller(), {
      name: 'Platform',
      version: '4.0.0',
      sequences: [
        { sequence_id: second.id, order: 2 },
        { sequence_id: first.short_id, order: 1 },
      ],
    });
    w.target('web-b');
    w.target('web-a');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      solution_id: solution.short_id,
      target_ids: ['tg1', 'tg2'],
    });
    // Assess
    expect(stepsOf(resolved)).toEqual([
      ['web-a', 'First', 1, 'A', 1, '1.0.0'],
      ['web-a', 'First', 1, 'B', 2, '1.0.0'],
      ['web-a', 'Second', 2, 'C', 1, '3.0.0'],
      ['web-b', 'First', 1, 'A', 1, '1.0.0'],
      ['web-b', 'First', 1, 'B', 2, '1.0.0'],
      ['web-b', 'Second', 2, 'C', 1, '3.0.0'],
    ]);
    expect([
      resolved.draft.sourceType,
      resolved.draft.solution,
      resolved.draft.sequence,
      resolved.draft.action,
    ]).toEqual(['solution', { id: solution.id, name: 'Platform', version: '4.0.0' }, null, null]);
    expect(new Set(resolved.draft.plan.steps.map((s) => s.id)).size).toBe(6);
  });

  it('answers 400 on solution_id for a missing solution', async () => {
    const w = world();
    w.target('web-1');
    const error = await rejection(resolveDeployment(w.deps, admin, { solution_id: 'missing', target_ids: ['tg1'] }));
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['solution_id']]);
  });
});
