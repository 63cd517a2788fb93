import { describe, expect, it } from 'vitest';
import { createAction, createVersion } from '../../../../domain/catalog/actions.js';
import { createSequence } from '../../../../domain/catalog/sequences.js';
import { createSolution } from '../../../../domain/catalog/solutions.js';
import type { ActionVariable } from '../../../../domain/catalog/types.js';
import { DeploymentFrozenError, FreezeOverrideNotAllowedError } from '../../../../domain/deployments/errors.js';
import type { CreateDeploymentCommand, PlanDeps } from '../../../../domain/deployments/plan/command.js';
import { checkFreezes } from '../../../../domain/deployments/plan/freezes.js';
import { previewDeployment } from '../../../../domain/deployments/plan/preview.js';
import { checkSecretReuse, inheritedVariables, mergeRedeploy } from '../../../../domain/deployments/plan/redeploy.js';
import { resolveDeployment } from '../../../../domain/deployments/plan/resolve.js';
import { configView, isSecretVariable } from '../../../../domain/deployments/views.js';
import { DomainError, ValidationError } from '../../../../domain/errors.js';
import { delegatedCaller } from '../../../../domain/identity/delegation.js';
import { ForbiddenError } from '../../../../domain/identity/errors.js';
import { systemRole } from '../../../../domain/identity/permissions.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { ENCRYPTED_PREFIX, openVariable } from '../../../../domain/shared/variable-secrets.js';
import type { Target } from '../../../../domain/targets/types.js';
import { AesGcmSecretCipher } from '../../../../infra/crypto/secret-cipher.js';
import { catalogCaller, catalogFakes, TENANT_A, TENANT_B } from '../../../fakes/catalog.js';
import { FakeClock } from '../../../fakes/clock.js';
import { FakeTargetRepository } from '../../../fakes/targets.js';
import { aFreeze, callerWith, tenancyFakes } from '../../../fakes/tenancy.js';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const ENV_GLOBAL = 'e0000000-0000-4000-8000-000000000001';
const ENV_A = 'e0000000-0000-4000-8000-00000000000a';
const ENV_A2 = 'e0000000-0000-4000-8000-0000000000a2';
const ENV_B = 'e0000000-0000-4000-8000-00000000000b';

const admin = callerWith('admin', null, 'admin-user');
const operator = callerWith('operator', null, 'operator-user');
const tenantUser = (tenantId = TENANT_A): Caller => callerWith('operator', tenantId, `user-of-${tenantId.slice(0, 4)}`);

/** A catalog, tenants A and B, environments, targets, freezes and a real cipher, all in memory. */
const world = () => {
  const catalog = catalogFakes();
  const tenancy = tenancyFakes();
  const stamp = { createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
  tenancy.tenants.tenants.set(TENANT_A, { id: TENANT_A, shortId: 'tnA', name: 'Tenant A', slug: 'tenant-a', ...stamp });
  tenancy.tenants.tenants.set(TENANT_B, { id: TENANT_B, shortId: 'tnB', name: 'Tenant B', slug: 'tenant-b', ...stamp });
  for (const [id, shortId, name, tenantId] of [
    [ENV_GLOBAL, 'envG', 'staging', null],
    [ENV_A, 'envA', 'prod-a', TENANT_A],
    [ENV_A2, 'envA2', 'test-a', TENANT_A],
    [ENV_B, 'envB', 'prod-b', TENANT_B],
  ] as const) {
    tenancy.environments.environments.set(id, { id, shortId, name, tenantId, ...stamp });
  }
  const targets = new FakeTargetRepository();
  const cipher = new AesGcmSecretCipher({ activeKeyId: 'test', keys: { test: Buffer.alloc(32, 9) } });
  let steps = 0;
  const deps: PlanDeps = {
    actions: catalog.actions,
    sequences: catalog.sequences,
    solutions: catalog.solutions,
    targets,
    tenants: tenancy.tenants,
    environments: tenancy.environments,
    freezes: tenancy.freezes,
    cipher,
    uuids: { uuid: () => `step-${(steps += 1)}` },
    clock: new FakeClock(NOW),
  };

  let targetCount = 0;
  const target = (name: string, overrides: Partial<Target> = {}): Target => {
    targetCount += 1;
    const made: Target = {
      id: `7a000000-0000-4000-8000-${String(targetCount).padStart(12, '0')}`,
      shortId: `tg${targetCount}`,
      name,
      hostname: `${name}.example`,
      os: 'linux',
      arch: 'x64',
      agentVersion: '1.0.0',
      tags: [],
      tenantId: null,
      environmentId: null,
      agentTokenHash: `hash-${targetCount}`,
      lastHeartbeatAt: new Date(NOW.getTime() - 5_000).toISOString(),
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      ...overrides,
    };
    targets.targets.set(made.id, made);
    return made;
  };

  let slugs = 0;
  /** An action with these versions (the first created first), global unless a tenant is given. */
  const action = async (
    name: string,
    versions: readonly (string | { version: string; variables: Partial<ActionVariable>[] })[],
    tenantId: string | null = null,
  ) => {
    slugs += 1;
    const [first, ...rest] = versions.map((v) => (typeof v === 'string' ? { version: v, variables: [] } : v));
    const creator = catalogCaller(tenantId);
    const input = (v: { version: string; variables: Partial<ActionVariable>[] }) => ({
      version: v.version,
      script: `echo ${name} ${v.version}`,
      variables: v.variables as never,
    });
    const made = await createAction(catalog.deps, creator, { slug: `action-${slugs}`, name, version: input(first!) });
    for (const v of rest) await createVersion(catalog.deps, creator, made.id, input(v));
    return made;
  };

  const sequence = async (
    name: string,
    steps: { action_id: string; version_requirement?: string; order?: number }[],
    tenantId: string | null = null,
  ) => createSequence(catalog.deps, catalogCaller(tenantId), { name, version: '2.1.0', steps });

  return { deps, catalog, tenancy, targets, cipher, target, action, sequence };
};

/** The ValidationError (or other domain error) a promise rejects with. */
const rejection = async (promise: Promise<unknown>): Promise<DomainError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};
const fieldsOf = (error: DomainError) => (error instanceof ValidationError ? error.fields.map((f) => f.field) : []);

const stepsOf = (resolved: Awaited<ReturnType<typeof resolveDeployment>>) =>
  resolved.draft.plan.steps.map((s) => [
    s.targetName,
    s.sequenceName,
    s.sequenceOrder,
    s.actionName,
    s.actionOrder,
    s.actionVersion,
  ]);

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

describe('tenancy', () => {
  it('a tenant-scoped caller without tenant_id deploys into its tenant; environment_id stays optional', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('a-1', { tenantId: TENANT_A });
    // Act
    const { draft } = await resolveDeployment(w.deps, tenantUser(TENANT_A), { action_id: act.id, target_ids: ['tg1'] });
    // Assess
    expect([draft.tenantId, draft.tenantName, draft.environmentId, draft.environmentName]).toEqual([
      TENANT_A,
      'Tenant A',
      null,
      null,
    ]);
    expect([draft.plan.tenantName, draft.config.tenantId]).toEqual(['Tenant A', TENANT_A]);
  });

  it('a tenant-scoped caller naming another tenant gets 403 FORBIDDEN tenant_restriction; its own short id is fine', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('a-1', { tenantId: TENANT_A, environmentId: ENV_A });
    // Act
    const other = await rejection(
      resolveDeployment(w.deps, tenantUser(TENANT_A), {
        action_id: act.id,
        target_ids: ['tg1'],
        tenant_id: TENANT_B,
        environment_id: ENV_B,
      }),
    );
    const own = await resolveDeployment(w.deps, tenantUser(TENANT_A), {
      action_id: act.id,
      target_ids: ['tg1'],
      tenant_id: 'tnA',
      environment_id: 'envA',
    });
    // Assess
    expect(other).toBeInstanceOf(ForbiddenError);
    expect([other.code, other.details]).toEqual(['FORBIDDEN', { reason: 'tenant_restriction' }]);
    expect([own.draft.tenantId, own.draft.environmentId, own.draft.environmentName]).toEqual([
      TENANT_A,
      ENV_A,
      'prod-a',
    ]);
  });

  it('a global caller names a tenant by id or short id; an unknown one is a 400 on tenant_id', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('b-1', { tenantId: TENANT_B, environmentId: ENV_B });
    // Act
    const ok = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      tenant_id: 'tnB',
      environment_id: ENV_B,
    });
    const unknown = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg1'],
        tenant_id: 'nope',
        environment_id: ENV_B,
      }),
    );
    // Assess
    expect([ok.draft.tenantId, ok.draft.tenantName]).toEqual([TENANT_B, 'Tenant B']);
    expect([unknown.code, fieldsOf(unknown)]).toEqual(['VALIDATION_ERROR', ['tenant_id']]);
  });

  it('the environment must exist, be visible, and be global or of the deployment’s tenant (400 on environment_id)', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('a-1', { tenantId: TENANT_A, environmentId: ENV_A });
    const body = (environment_id: string, tenant_id?: string): CreateDeploymentCommand => ({
      action_id: act.id,
      target_ids: ['tg1'],
      environment_id,
      ...(tenant_id ? { tenant_id } : {}),
    });
    // Act
    const unknown = await rejection(resolveDeployment(w.deps, admin, body('nope', TENANT_A)));
    const otherTenants = await rejection(resolveDeployment(w.deps, admin, body(ENV_B, TENANT_A)));
    const invisible = await rejection(resolveDeployment(w.deps, tenantUser(TENANT_A), body(ENV_B)));
    // Assess
    expect([unknown.code, fieldsOf(unknown)]).toEqual(['VALIDATION_ERROR', ['environment_id']]);
    expect([otherTenants.code, fieldsOf(otherTenants), otherTenants.message]).toEqual([
      'VALIDATION_ERROR',
      ['environment_id'],
      expect.stringContaining('another tenant'),
    ]);
    expect([invisible.code, fieldsOf(invisible), invisible.message]).toEqual([
      'VALIDATION_ERROR',
      ['environment_id'],
      expect.stringContaining('does not exist'),
    ]);
  });

  it('a global environment suits any tenant; a tenant’s environment without tenant_id brings its tenant', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('a-staging', { tenantId: TENANT_A, environmentId: ENV_GLOBAL });
    w.target('a-prod', { tenantId: TENANT_A, environmentId: ENV_A });
    // Act
    const globalEnv = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      tenant_id: TENANT_A,
      environment_id: 'envG',
    });
    const implied = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg2'],
      environment_id: ENV_A,
    });
    // Assess
    expect([globalEnv.draft.tenantId, globalEnv.draft.environmentName]).toEqual([TENANT_A, 'staging']);
    expect([implied.draft.tenantId, implied.draft.tenantName, implied.draft.environmentName]).toEqual([
      TENANT_A,
      'Tenant A',
      'prod-a',
    ]);
  });
});

describe('targets', () => {
  it('target_ids take UUIDs and short ids; an unknown or invisible one is a 400 on target_ids.N', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    const one = w.target('a-1', { tenantId: TENANT_A });
    w.target('a-2', { tenantId: TENANT_A });
    w.target('b-1', { tenantId: TENANT_B });
    // Act
    const ok = await resolveDeployment(w.deps, tenantUser(TENANT_A), {
      action_id: act.id,
      target_ids: [one.id, 'tg2'],
    });
    const bad = await rejection(
      resolveDeployment(w.deps, tenantUser(TENANT_A), { action_id: act.id, target_ids: [one.id, 'nope', 'tg3'] }),
    );
    // Assess
    expect(ok.draft.plan.steps.map((s) => s.targetName)).toEqual(['a-1', 'a-2']);
    expect([bad.code, fieldsOf(bad)]).toEqual(['VALIDATION_ERROR', ['target_ids.1', 'target_ids.2']]);
    expect(bad.message).toContain("Target 'tg3' does not exist");
  });

  it('target_tags match any pair by default (OR) and every pair with target_tags_match_all (AND)', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('web', {
      tags: [
        { key: 'env', value: 'prod' },
        { key: 'role', value: 'web' },
      ],
    });
    w.target('db', {
      tags: [
        { key: 'env', value: 'prod' },
        { key: 'role', value: 'db' },
      ],
    });
    w.target('stage-web', {
      tags: [
        { key: 'env', value: 'stage' },
        { key: 'role', value: 'web' },
      ],
    });
    const tags = [
      { key: 'env', value: 'prod' },
      { key: 'role', value: 'web' },
    ];
    // Act
    const any = await resolveDeployment(w.deps, admin, { action_id: act.id, target_tags: tags });
    const all = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_tags: tags,
      target_tags_match_all: true,
    });
    // Assess
    expect(any.draft.plan.steps.map((s) => s.targetName)).toEqual(['db', 'stage-web', 'web']);
    expect(all.draft.plan.steps.map((s) => s.targetName)).toEqual(['web']);
    expect([any.draft.config.targetTagsMatchAll, all.draft.config.targetTagsMatchAll]).toEqual([false, true]);
  });

  it('ids and tags together: the union, each target once, by name then id', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    const zed = w.target('zed', { tags: [{ key: 'role', value: 'web' }] });
    const twinB = w.target('twin', {
      id: '7a000000-0000-4000-8000-00000000000b',
      tags: [{ key: 'role', value: 'web' }],
    });
    const twinA = w.target('twin', { id: '7a000000-0000-4000-8000-00000000000a' });
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: [zed.id, twinA.id, zed.shortId],
      target_tags: [{ key: 'role', value: 'web' }],
    });
    // Assess
    expect(resolved.draft.plan.steps.map((s) => s.targetId)).toEqual([twinA.id, twinB.id, zed.id]);
    expect(resolved.draft.plan.targetCount).toBe(3);
  });

  it('are scoped: a tenant’s deployment selects only its tenant’s targets, in its environment when one is given', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    const web = [{ key: 'role', value: 'web' }];
    w.target('global-web', { tags: web });
    w.target('a-prod', { tags: web, tenantId: TENANT_A, environmentId: ENV_A });
    w.target('a-test', { tags: web, tenantId: TENANT_A, environmentId: ENV_A2 });
    w.target('a-none', { tags: web, tenantId: TENANT_A });
    w.target('b-prod', { tags: web, tenantId: TENANT_B, environmentId: ENV_B });
    // Act
    const tenantOnly = await resolveDeployment(w.deps, tenantUser(TENANT_A), { action_id: act.id, target_tags: web });
    const inProd = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_tags: web,
      tenant_id: TENANT_A,
      environment_id: ENV_A,
    });
    const global = await resolveDeployment(w.deps, admin, { action_id: act.id, target_tags: web });
    const wrongEnv = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg3'],
        tenant_id: TENANT_A,
        environment_id: ENV_A,
      }),
    );
    const wrongTenant = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg5'],
        tenant_id: TENANT_A,
        environment_id: ENV_A,
      }),
    );
    const tenantTargetInGlobal = await rejection(
      resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg2'] }),
    );
    // Assess
    expect(tenantOnly.draft.plan.steps.map((s) => s.targetName)).toEqual(['a-none', 'a-prod', 'a-test']);
    expect(inProd.draft.plan.steps.map((s) => s.targetName)).toEqual(['a-prod']);
    expect(global.draft.plan.steps.map((s) => s.targetName)).toEqual(['global-web']);
    expect([fieldsOf(wrongEnv), wrongEnv.message]).toEqual([
      ['target_ids.0'],
      expect.stringContaining("not in environment 'prod-a'"),
    ]);
    expect([fieldsOf(wrongTenant), wrongTenant.message]).toEqual([
      ['target_ids.0'],
      expect.stringContaining("not a target of tenant 'Tenant A'"),
    ]);
    expect([fieldsOf(tenantTargetInGlobal), tenantTargetInGlobal.message]).toEqual([
      ['target_ids.0'],
      expect.stringContaining('belongs to a tenant'),
    ]);
  });

  it('no target at all is a 400 on target_tags ("no target matches")', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('web', { tags: [{ key: 'role', value: 'web' }] });
    // Act
    const error = await rejection(
      resolveDeployment(w.deps, admin, { action_id: act.id, target_tags: [{ key: 'role', value: 'db' }] }),
    );
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['target_tags']]);
    expect(error.message).toContain('No target matches');
    expect(error.message).toContain('role=db');
  });

  it('source and target problems are reported together', async () => {
    const w = world();
    const error = await rejection(resolveDeployment(w.deps, admin, { action_id: 'nope', target_ids: ['nope'] }));
    expect(fieldsOf(error)).toEqual(['action_id', 'target_ids.0']);
  });
});

describe('variables', () => {
  const declared = (variables: Partial<ActionVariable>[]) =>
    variables.map((v) => ({ required: false, secret: false, default: null, description: null, ...v }));

  it('defaults, overridden by variables, overridden by prompted_values; unset optional ones warned', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: declared([
          { name: 'PORT', default: '80' },
          { name: 'HOST', default: 'a' },
          { name: 'MODE', default: 'x' },
          { name: 'EXTRA' },
        ]),
      },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { HOST: 'b', MODE: 'y' },
      prompted_values: { MODE: 'z' },
    });
    // Assess
    expect(resolved.draft.plan.resolvedVariables).toEqual({
      PORT: { value: '80', secret: false },
      HOST: { value: 'b', secret: false },
      MODE: { value: 'z', secret: false },
    });
    expect(resolved.draft.config.variables).toEqual({ HOST: 'b', MODE: 'y' });
    expect(resolved.draft.config.promptedValues).toEqual({ MODE: 'z' });
    expect(resolved.draft.plan.warnings).toBeUndefined();
    expect(resolved.warnings).toContain("Variable EXTRA ('Act') has no value: its scripts see it unset.");
  });

  it('a required variable without a value is a 400 with one field per variable; a prompted value satisfies it', async () => {
    // Prepare
    const w = world();
    const a = await w.action('Deploy', [
      {
        version: '1.0.0',
        variables: declared([
          { name: 'TOKEN', required: true },
          { name: 'REGION', required: true },
        ]),
      },
    ]);
    const b = await w.action('Notify', [
      {
        version: '1.0.0',
        variables: declared([{ name: 'CHANNEL', required: true, default: '#ops' }, { name: 'REGION' }]),
      },
    ]);
    const seq = await w.sequence('Both', [{ action_id: a.id }, { action_id: b.id }]);
    w.target('web-1');
    // Act
    const error = await rejection(resolveDeployment(w.deps, admin, { sequence_id: seq.id, target_ids: ['tg1'] }));
    const ok = await resolveDeployment(w.deps, admin, {
      sequence_id: seq.id,
      target_ids: ['tg1'],
      variables: { TOKEN: 't' },
      prompted_values: { REGION: 'eu' },
    });
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['variables.TOKEN', 'variables.REGION']]);
    expect(error.message).toContain("Variable REGION is required by 'Deploy', 'Notify' and has no value.");
    expect(Object.keys(ok.draft.plan.resolvedVariables)).toEqual(['TOKEN', 'REGION', 'CHANNEL']);
    expect(ok.draft.plan.resolvedVariables['CHANNEL']?.value).toBe('#ops');
  });

  it.each(['valueOf', 'toString', 'constructor', 'hasOwnProperty'])(
    'a required variable named like an object member (%s) is an ordinary name: without a value it is a 400',
    async (name) => {
      // Prepare
      const w = world();
      const act = await w.action('Act', [{ version: '1.0.0', variables: declared([{ name, required: true }]) }]);
      w.target('web-1');
      // Act
      const error = await rejection(resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'] }));
      const ok = await resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg1'],
        variables: { [name]: 'given' },
      });
      // Assess
      expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', [`variables.${name}`]]);
      expect(Object.hasOwn(ok.draft.plan.resolvedVariables, name)).toBe(true);
      expect(ok.draft.plan.resolvedVariables[name]?.value).toBe('given');
    },
  );

  it('secret values are encrypted wherever the draft keeps them, and never appear in plain text', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: declared([
          { name: 'API_TOKEN', secret: true, required: true },
          { name: 'DB_PASSWORD', secret: true },
          { name: 'PLAIN' },
        ]),
      },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { API_TOKEN: 'hunter2-body', PLAIN: 'visible' },
      prompted_values: { API_TOKEN: 'hunter2-prompted', DB_PASSWORD: 'pa55word' },
    });
    // Assess
    const json = JSON.stringify(resolved.draft);
    for (const secret of ['hunter2-body', 'hunter2-prompted', 'pa55word']) expect(json).not.toContain(secret);
    expect(json).toContain('visible');
    const { resolvedVariables } = resolved.draft.plan;
    expect(resolvedVariables['API_TOKEN']?.secret).toBe(true);
    expect(resolvedVariables['API_TOKEN']?.value.startsWith(ENCRYPTED_PREFIX)).toBe(true);
    expect(openVariable(w.cipher, resolvedVariables['API_TOKEN']!.value, true)).toBe('hunter2-prompted');
    expect(openVariable(w.cipher, resolvedVariables['DB_PASSWORD']!.value, true)).toBe('pa55word');
    expect(openVariable(w.cipher, resolved.draft.config.variables['API_TOKEN']!, true)).toBe('hunter2-body');
    expect(openVariable(w.cipher, resolved.draft.config.promptedValues['DB_PASSWORD']!, true)).toBe('pa55word');
    expect(resolved.draft.config.variables['PLAIN']).toBe('visible');
  });
  it('whether a value is secret is the stored flag: NOTE=enc:x is an ordinary value, shown and reused exactly as given', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      { version: '1.0.0', variables: declared([{ name: 'NOTE' }, { name: 'TOKEN', secret: true }]) },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { NOTE: 'enc:x', TOKEN: 'enc:y' },
    });
    const again = mergeRedeploy(w.cipher, resolved.draft, {});
    const shown = configView(resolved.draft.config, (name) => isSecretVariable(resolved.draft.plan, name));
    // Assess
    expect(resolved.draft.plan.resolvedVariables['NOTE']).toEqual({ value: 'enc:x', secret: false });
    expect(openVariable(w.cipher, 'enc:x', false)).toBe('enc:x');
    expect(openVariable(w.cipher, resolved.draft.plan.resolvedVariables['TOKEN']!.value, true)).toBe('enc:y');
    expect(shown.variables).toEqual({ NOTE: 'enc:x', TOKEN: '***' });
    expect(again.variables).toEqual({ NOTE: 'enc:x', TOKEN: 'enc:y' });
  });

  it('a variable no action of the plan declares is a 400, one field per name, in variables and prompted_values', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [{ version: '1.0.0', variables: declared([{ name: 'PORT' }]) }]);
    w.target('web-1');
    // Act
    const error = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: act.id,
        target_ids: ['tg1'],
        variables: { PORT: '80', OTHER: 'x' },
        prompted_values: { EXTRA: 'y' },
      }),
    );
    // Assess
    expect([error.code, fieldsOf(error)]).toEqual(['VALIDATION_ERROR', ['variables.OTHER', 'prompted_values.EXTRA']]);
    expect(error instanceof ValidationError && error.fields.map((f) => f.message)).toEqual([
      'Variable OTHER is not declared by any action of the plan',
      'Variable EXTRA is not declared by any action of the plan',
    ]);
  });

  it.each([
    ['variables', 'NODE_OPTIONS'],
    ['variables', 'LD_PRELOAD'],
    ['variables', 'ld_preload'],
    ['prompted_values', 'PS4'],
    ['prompted_values', 'BASH_ENV'],
    ['variables', '__proto__'],
  ] as const)('a refused name is a 400 on %s.%s even when nothing declares it', async (field, name) => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [{ version: '1.0.0', variables: declared([{ name: 'PORT' }]) }]);
    w.target('web-1');
    const map = Object.fromEntries([[name, 'x']]); // an own `__proto__` key, as JSON.parse makes it
    // Act
    const error = await rejection(
      resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'], [field]: map }),
    );
    // Assess
    expect(fieldsOf(error)).toEqual([`${field}.${name}`]);
    expect(error.message).toContain(`Variable ${name} is not allowed in a command's environment`);
  });

  it('valueOf, constructor and toString are ordinary names: declared, given and resolved like any other', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: declared([{ name: 'valueOf' }, { name: 'constructor', default: 'c' }, { name: 'toString' }]),
      },
    ]);
    w.target('web-1');
    // Act
    const resolved = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { valueOf: 'v' },
    });
    const undeclared = await rejection(
      resolveDeployment(w.deps, admin, {
        action_id: (await w.action('Bare', ['1.0.0'])).id,
        target_ids: ['tg1'],
        variables: { hasOwnProperty: 'h' },
      }),
    );
    // Assess
    expect(resolved.draft.plan.resolvedVariables).toEqual({
      valueOf: { value: 'v', secret: false },
      constructor: { value: 'c', secret: false },
    });
    expect(fieldsOf(undeclared)).toEqual(['variables.hasOwnProperty']);
  });

  it('an action version stored before the rule that declares a refused name refuses the plan, naming the action and the variable', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Old', [{ version: '1.0.0', variables: declared([{ name: 'PORT' }]) }]);
    const stored = w.catalog.actions.versions.get(act.id)!;
    w.catalog.actions.versions.set(act.id, [
      {
        ...stored[0]!,
        variables: [
          ...stored[0]!.variables,
          { name: 'NODE_OPTIONS', description: null, required: false, default: '--import=x', secret: false },
        ],
      },
    ]);
    w.target('web-1');
    // Act
    const error = await rejection(resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'] }));
    // Assess
    expect(fieldsOf(error)).toEqual(['action_id']);
    expect(error.message).toContain("Action 'Old' 1.0.0 declares variable NODE_OPTIONS, which is refused");
  });
});

describe('config', () => {
  it('applies the defaults: sequential, stop_on_first_failure, no rollback, priority 0, 3600 s, no retries, no overall timeout', async () => {
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('web-1');
    const { draft } = await resolveDeployment(w.deps, admin, { action_id: act.id, target_ids: ['tg1'] });
    expect(draft.config).toEqual({
      targetMode: 'sequential',
      failureStrategy: 'stop_on_first_failure',
      rollbackStrategy: 'none',
      priority: 0,
      timeoutSeconds: 3600,
      maxRetries: 0,
      deploymentTimeoutSeconds: 0,
      targetIds: ['tg1'],
      targetTags: [],
      targetTagsMatchAll: false,
      variables: {},
      promptedValues: {},
      versionRequirement: null,
      tenantId: null,
      environmentId: null,
      bypassCache: false,
    });
    expect([draft.freezeOverride, draft.sourceDeploymentId]).toEqual([null, null]);
  });

  it('keeps the given settings', async () => {
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('web-1');
    w.target('web-2');
    const { draft, warnings } = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      target_ids: ['tg1', 'tg2'],
      target_mode: { rolling: { batch_size: 5 } },
      failure_strategy: 'continue_on_failure',
      rollback_strategy: 'all_executed',
      priority: -7,
      timeout_seconds: 60,
      max_retries: 3,
      deployment_timeout_seconds: 900,
      bypass_cache: true,
      version_requirement: '^1',
    });
    expect(draft.config).toMatchObject({
      targetMode: { rolling: { batch_size: 5 } },
      failureStrategy: 'continue_on_failure',
      rollbackStrategy: 'all_executed',
      priority: -7,
      timeoutSeconds: 60,
      maxRetries: 3,
      deploymentTimeoutSeconds: 900,
      bypassCache: true,
      versionRequirement: '^1',
    });
    expect(warnings).toContain('The rolling batch size (5) covers all 2 targets at once.');
  });
});

describe('freezes', () => {
  const frozenWorld = async () => {
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('a-prod', { tenantId: TENANT_A, environmentId: ENV_A });
    w.tenancy.freezes.freezes.set(
      'f1',
      aFreeze({
        id: 'f1',
        name: 'Year end',
        reason: 'change freeze',
        startTime: '2026-11-01T00:00:00.000Z',
        endTime: '2027-01-03T00:00:00.000Z',
        environmentId: ENV_A,
      }),
    );
    w.tenancy.freezes.freezes.set(
      'f2',
      aFreeze({
        id: 'f2',
        name: 'Other env',
        startTime: '2026-11-01T00:00:00.000Z',
        endTime: '2027-01-03T00:00:00.000Z',
        environmentId: ENV_A2,
      }),
    );
    w.tenancy.freezes.freezes.set(
      'f3',
      aFreeze({ id: 'f3', name: 'Over', startTime: '2026-10-01T00:00:00.000Z', endTime: '2026-11-01T00:00:00.000Z' }),
    );
    const command: CreateDeploymentCommand = {
      action_id: act.id,
      target_ids: ['tg1'],
      tenant_id: TENANT_A,
      environment_id: ENV_A,
    };
    return { w, command };
  };

  it('finds the freezes in force that match the deployment and warns about them', async () => {
    const { w, command } = await frozenWorld();
    const resolved = await resolveDeployment(w.deps, admin, command);
    expect(resolved.activeFreezes.map((f) => f.id)).toEqual(['f1']);
    expect(resolved.warnings).toContain(
      "Deployments are frozen by 'Year end' until 2027-01-03T00:00:00.000Z (change freeze).",
    );
  });

  it('without override: 409 DEPLOYMENT_FROZEN with the freezes and can_override (true only for admins)', async () => {
    // Prepare
    const { w, command } = await frozenWorld();
    const resolved = await resolveDeployment(w.deps, admin, command);
    // Act
    const forOperator = await rejection(Promise.resolve().then(() => checkFreezes(resolved, operator, command)));
    const forAdmin = await rejection(Promise.resolve().then(() => checkFreezes(resolved, admin, command)));
    // Assess
    expect(forOperator).toBeInstanceOf(DeploymentFrozenError);
    expect([forOperator.code, forOperator.kind]).toEqual(['DEPLOYMENT_FROZEN', 'conflict']);
    expect(forOperator.details).toEqual({
      active_freezes: [{ id: 'f1', name: 'Year end', ends_at: '2027-01-03T00:00:00.000Z' }],
      can_override: false,
    });
    expect(forAdmin.details).toMatchObject({ can_override: true });
  });

  it('an admin’s override with a reason proceeds and is recorded', async () => {
    const { w, command } = await frozenWorld();
    const resolved = await resolveDeployment(w.deps, admin, command);
    const override = checkFreezes(resolved, admin, {
      override_freeze: true,
      override_reason: '  hotfix for incident 42 ',
    });
    expect(override).toEqual({
      reason: 'hotfix for incident 42',
      by: 'admin-user',
      freezes: [{ id: 'f1', name: 'Year end', ends_at: '2027-01-03T00:00:00.000Z' }],
    });
  });

  it('an admin’s override without a reason is a 400 MISSING_FIELD on override_reason', async () => {
    const { w, command } = await frozenWorld();
    const resolved = await resolveDeployment(w.deps, admin, command);
    const error = await rejection(
      Promise.resolve().then(() => checkFreezes(resolved, admin, { override_freeze: true, override_reason: ' ' })),
    );
    expect([error.code, fieldsOf(error)]).toEqual(['MISSING_FIELD', ['override_reason']]);
  });

  it('override_freeze by a non-admin is 403 INSUFFICIENT_PERMISSIONS, frozen or not', async () => {
    const { w, command } = await frozenWorld();
    const resolved = await resolveDeployment(w.deps, admin, command);
    for (const freezes of [resolved.activeFreezes, []]) {
      const error = await rejection(
        Promise.resolve().then(() =>
          checkFreezes({ activeFreezes: freezes }, operator, { override_freeze: true, override_reason: 'please' }),
        ),
      );
      expect(error).toBeInstanceOf(FreezeOverrideNotAllowedError);
      expect([error.code, error.kind, error.details]).toEqual([
        'INSUFFICIENT_PERMISSIONS',
        'forbidden',
        { required_role: 'admin', field: 'override_freeze' },
      ]);
    }
  });

  it('an admin’s delegated credential overrides only when its effective permissions include freezes:update', async () => {
    // Prepare: an admin's key narrowed to deploying, and one that also names freezes:update
    const { w, command } = await frozenWorld();
    const resolved = await resolveDeployment(w.deps, admin, command);
    const grants = new Map([['admin', new Set(systemRole('admin')!.permissions)]]);
    const owner = { id: 'admin-user', tenantId: null, roles: ['admin'] };
    const narrow = delegatedCaller(owner, grants, {
      type: 'api_key',
      id: 'k1',
      scopes: ['deployments:create', 'deployments:read'],
    });
    const wide = delegatedCaller(owner, grants, {
      type: 'oauth',
      id: 'dplc_x',
      scopes: ['deployments:create', 'freezes:update'],
    });
    const overriding = { override_freeze: true, override_reason: 'hotfix' };
    // Act
    const refused = await rejection(Promise.resolve().then(() => checkFreezes(resolved, narrow, overriding)));
    const frozen = await rejection(Promise.resolve().then(() => checkFreezes(resolved, narrow, command)));
    const offered = await rejection(Promise.resolve().then(() => checkFreezes(resolved, wide, command)));
    // Assess
    expect([refused.code, refused.details]).toEqual([
      'INSUFFICIENT_PERMISSIONS',
      { required_role: 'admin', field: 'override_freeze', required_permission: 'freezes:update' },
    ]);
    expect(frozen.details).toMatchObject({ can_override: false });
    expect(offered.details).toMatchObject({ can_override: true });
    expect(checkFreezes(resolved, wide, overriding)).toMatchObject({ reason: 'hotfix', by: 'admin-user' });
  });

  it('no freeze in force: null, override or not', async () => {
    expect(checkFreezes({ activeFreezes: [] }, operator, {})).toBeNull();
    expect(checkFreezes({ activeFreezes: [] }, admin, { override_freeze: true, override_reason: 'x' })).toBeNull();
  });

  it('a solution-scoped freeze matches a deployment of that solution only', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    const seq = await w.sequence('Seq', [{ action_id: act.id }]);
    const solution = await createSolution(w.catalog.deps, catalogCaller(), {
      name: 'Sol',
      sequences: [{ sequence_id: seq.id }],
    });
    w.target('web-1');
    w.tenancy.freezes.freezes.set(
      'fs',
      aFreeze({
        id: 'fs',
        name: 'Sol freeze',
        startTime: '2026-11-01T00:00:00.000Z',
        endTime: '2026-12-01T00:00:00.000Z',
        solutionId: solution.id,
      }),
    );
    // Act
    const ofSolution = await resolveDeployment(w.deps, admin, { solution_id: solution.id, target_ids: ['tg1'] });
    const ofSequence = await resolveDeployment(w.deps, admin, { sequence_id: seq.id, target_ids: ['tg1'] });
    // Assess
    expect(ofSolution.activeFreezes.map((f) => f.id)).toEqual(['fs']);
    expect(ofSequence.activeFreezes).toEqual([]);
  });
});

describe('previewDeployment', () => {
  it('answers the spec’s preview result: plan, warnings, target_summary, masked variables and the source', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Restart', [
      {
        version: '1.2.0',
        variables: [{ name: 'TOKEN', secret: true, required: true, default: null, description: null }],
      },
    ]);
    const web = [{ key: 'role', value: 'web' }];
    w.target('online', { tags: web });
    w.target('stale', { tags: web, lastHeartbeatAt: new Date(NOW.getTime() - 120_000).toISOString() });
    w.target('offline', { tags: web, lastHeartbeatAt: '2026-11-22T08:00:00.000Z' });
    w.target('never', { tags: web, lastHeartbeatAt: null });
    w.tenancy.freezes.freezes.set(
      'g',
      aFreeze({ id: 'g', name: 'Global', startTime: '2026-11-22T00:00:00.000Z', endTime: '2026-11-23T00:00:00.000Z' }),
    );
    const before = JSON.stringify([
      ...w.targets.targets.values(),
      ...w.tenancy.freezes.freezes.values(),
      ...w.catalog.actions.actions.values(),
    ]);
    // Act
    const preview = await previewDeployment(w.deps, operator, {
      action_id: act.id,
      target_tags: web,
      variables: { TOKEN: 's3cret' },
    });
    // Assess
    expect(Object.keys(preview).sort()).toEqual([
      'active_freezes',
      'plan',
      'source_name',
      'source_type',
      'source_version',
      'target_summary',
      'variables',
      'warnings',
    ]);
    expect([preview.source_type, preview.source_name, preview.source_version]).toEqual(['action', 'Restart', '1.2.0']);
    expect(preview.target_summary).toEqual({ total: 4, online: 1, offline: 2, stale: 1 });
    expect(preview.variables).toEqual({ TOKEN: '***' });
    expect(preview.plan.resolved_variables).toEqual({ TOKEN: '***' });
    expect(preview.plan.target_count).toBe(4);
    expect(
      preview.plan.steps.map((s) => [
        s.target_name,
        s.action_name,
        s.action_version,
        s.sequence_order,
        s.action_order,
        s.state,
      ]),
    ).toEqual([
      ['never', 'Restart', '1.2.0', 1, 1, 'pending'],
      ['offline', 'Restart', '1.2.0', 1, 1, 'pending'],
      ['online', 'Restart', '1.2.0', 1, 1, 'pending'],
      ['stale', 'Restart', '1.2.0', 1, 1, 'pending'],
    ]);
    expect(preview.warnings).toEqual([
      "Target 'never' is offline: no agent ever connected.",
      "Target 'offline' is offline: its agent was last seen 2 h ago (2026-11-22T08:00:00.000Z).",
      `Target 'stale' is stale: its agent was last seen 2 min ago (${new Date(NOW.getTime() - 120_000).toISOString()}).`,
      "Deployments are frozen by 'Global' until 2026-11-23T00:00:00.000Z.",
    ]);
    expect(preview.active_freezes).toEqual([{ id: 'g', name: 'Global', ends_at: '2026-11-23T00:00:00.000Z' }]);
    expect(JSON.stringify(preview)).not.toContain('s3cret');
    expect(
      JSON.stringify([
        ...w.targets.targets.values(),
        ...w.tenancy.freezes.freezes.values(),
        ...w.catalog.actions.actions.values(),
      ]),
    ).toBe(before);
  });

  it('never answers DEPLOYMENT_FROZEN nor 403 for an override: both are warnings', async () => {
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    w.target('web-1');
    w.tenancy.freezes.freezes.set(
      'g',
      aFreeze({ id: 'g', name: 'Global', startTime: '2026-11-22T00:00:00.000Z', endTime: '2026-11-23T00:00:00.000Z' }),
    );
    const preview = await previewDeployment(w.deps, operator, {
      action_id: act.id,
      target_ids: ['tg1'],
      override_freeze: true,
      override_reason: 'x',
    });
    expect(preview.warnings).toContain(
      'override_freeze needs the admin role (an API key, OAuth token or trigger also needs the freezes:update scope): creating this deployment would answer 403.',
    );
    expect(preview.active_freezes).toHaveLength(1);
  });

  it('names a sequence or solution source with its own version', async () => {
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    const seq = await w.sequence('Release', [{ action_id: act.id }]);
    w.target('web-1');
    const preview = await previewDeployment(w.deps, admin, { sequence_id: seq.id, target_ids: ['tg1'] });
    expect([preview.source_type, preview.source_name, preview.source_version]).toEqual([
      'sequence',
      'Release',
      '2.1.0',
    ]);
    expect(preview.plan.steps[0]).toMatchObject({
      sequence_id: seq.id,
      sequence_name: 'Release',
      sequence_order: 1,
      action_order: 1,
    });
  });
});

describe('mergeRedeploy', () => {
  it('copies the source and configuration, merges variables (secrets decrypted, then re-encrypted), replaces the rest', async () => {
    // Prepare
    const w = world();
    const act = await w.action('Act', [
      {
        version: '1.0.0',
        variables: [
          { name: 'TOKEN', secret: true, required: true, default: null, description: null },
          { name: 'KEEP', secret: false, required: false, default: null, description: null },
          { name: 'CHANGE', secret: false, required: false, default: null, description: null },
        ],
      },
    ]);
    w.target('a-prod', { tenantId: TENANT_A, environmentId: ENV_A, tags: [{ key: 'role', value: 'web' }] });
    w.target('a-prod-2', { tenantId: TENANT_A, environmentId: ENV_A });
    const original = await resolveDeployment(w.deps, tenantUser(), {
      action_id: act.id,
      version_requirement: '^1',
      target_tags: [{ key: 'role', value: 'web' }],
      environment_id: ENV_A,
      variables: { TOKEN: 'old-secret', KEEP: 'k', CHANGE: 'a' },
      priority: 5,
      max_retries: 2,
    });
    // Act
    const command = mergeRedeploy(w.cipher, original.draft, {
      variables: { CHANGE: 'b' },
      priority: 9,
      target_ids: ['tg2'],
    });
    const again = await resolveDeployment(w.deps, tenantUser(), command);
    // Assess
    expect(command).toMatchObject({
      action_id: act.id,
      solution_id: null,
      sequence_id: null,
      version_requirement: '^1',
      variables: { TOKEN: 'old-secret', KEEP: 'k', CHANGE: 'b' },
      priority: 9,
      max_retries: 2,
      target_ids: ['tg2'],
      target_tags: [],
      tenant_id: TENANT_A,
      environment_id: ENV_A,
      override_freeze: false,
      dry_run: false,
    });
    expect(again.draft.plan.steps.map((s) => s.targetName)).toEqual(['a-prod-2']);
    expect(openVariable(w.cipher, again.draft.plan.resolvedVariables['TOKEN']!.value, true)).toBe('old-secret');
    expect(JSON.stringify(again.draft)).not.toContain('old-secret');
  });

  it('drops original variables the new plan no longer declares, with a warning kept in the plan; given ones must be declared', async () => {
    // Prepare
    const w = world();
    const v1 = [{ name: 'GONE', secret: false, required: false, default: null, description: null }];
    const act = await w.action('Act', [{ version: '1.0.0', variables: v1 }]);
    w.target('web-1');
    const original = await resolveDeployment(w.deps, admin, {
      action_id: act.id,
      version_requirement: '^1',
      target_ids: ['tg1'],
      variables: { GONE: 'g' },
    });
    await createVersion(w.catalog.deps, catalogCaller(null), act.id, {
      version: '1.1.0',
      script: 'echo new',
      variables: [{ name: 'KEPT', required: false, secret: false }],
    });
    // Act
    const overrides = { variables: { KEPT: 'k' } };
    const again = await resolveDeployment(w.deps, admin, mergeRedeploy(w.cipher, original.draft, overrides), {
      inherited: inheritedVariables(original.draft, overrides),
    });
    const bad = { variables: { GONE: 'given again' } };
    const error = await rejection(
      resolveDeployment(w.deps, admin, mergeRedeploy(w.cipher, original.draft, bad), {
        inherited: inheritedVariables(original.draft, bad),
      }),
    );
    // Assess
    const warning = 'Variable GONE of the original deployment is dropped: the new plan does not declare it.';
    expect(again.draft.plan.resolvedVariables).toEqual({ KEPT: { value: 'k', secret: false } });
    expect(again.draft.config.variables).toEqual({ KEPT: 'k' });
    expect(again.draft.plan.warnings).toEqual([warning]);
    expect(again.warnings).toContain(warning);
    expect(fieldsOf(error)).toEqual(['variables.GONE']);
  });

  it('reuses no secret for anyone but the original triggerer or an admin: each must be given again (400 naming the missing ones)', async () => {
    // Prepare
    const w = world();
    const secret = (name: string) => ({ name, secret: true, required: false, default: null, description: null });
    const act = await w.action('Act', [
      { version: '1.0.0', variables: [secret('TOKEN'), secret('KEY'), { ...secret('PLAIN'), secret: false }] },
    ]);
    w.target('web-1');
    const original = await resolveDeployment(w.deps, operator, {
      action_id: act.id,
      target_ids: ['tg1'],
      variables: { KEY: 'old-key', PLAIN: 'p' },
      prompted_values: { TOKEN: 'old-token' },
    });
    const other = callerWith('operator', null, 'someone-else');
    // Act
    const error = await rejection(
      (async () => checkSecretReuse(other, original.draft, { variables: { KEY: 'new-key' } }))(),
    );
    const reuse = checkSecretReuse(other, original.draft, { variables: { KEY: 'new-key', TOKEN: 'new-token' } });
    const merged = mergeRedeploy(
      w.cipher,
      original.draft,
      { variables: { KEY: 'new-key', TOKEN: 'new-token' } },
      reuse,
    );
    const again = await resolveDeployment(w.deps, other, merged);
    // Assess
    expect(fieldsOf(error)).toEqual(['variables.TOKEN']);
    expect(error.message).toContain(
      'Secret variable TOKEN must be given again: only the original triggerer, or an admin signed in as a user (not with an API key, OAuth token or trigger), may reuse it',
    );
    expect(reuse).toEqual({ reuseSecrets: false });
    expect([merged.variables, merged.prompted_values]).toEqual([
      { PLAIN: 'p', KEY: 'new-key', TOKEN: 'new-token' },
      {},
    ]);
    expect(openVariable(w.cipher, again.draft.plan.resolvedVariables['TOKEN']!.value, true)).toBe('new-token');
    expect(checkSecretReuse(operator, original.draft, {})).toEqual({ reuseSecrets: true });
    expect(checkSecretReuse(admin, original.draft, {})).toEqual({ reuseSecrets: true });
    // an admin's credential (even with every permission) is not an admin session: it gives each secret again
    const adminKey = delegatedCaller(
      { id: 'admin-user', tenantId: null, roles: ['admin'] },
      new Map([['admin', new Set(systemRole('admin')!.permissions)]]),
      { type: 'api_key', id: 'k1', scopes: systemRole('admin')!.permissions },
    );
    expect(fieldsOf(await rejection((async () => checkSecretReuse(adminKey, original.draft, {}))()))).toEqual([
      'variables.TOKEN',
      'variables.KEY',
    ]);
    expect(mergeRedeploy(w.cipher, original.draft, {}, { reuseSecrets: true }).prompted_values).toEqual({
      TOKEN: 'old-token',
    });
  });

  it('an empty override reuses everything', async () => {
    const w = world();
    const act = await w.action('Act', ['1.0.0']);
    const seq = await w.sequence('Seq', [{ action_id: act.id }]);
    w.target('web-1', { tags: [{ key: 'role', value: 'web' }] });
    const original = await resolveDeployment(w.deps, admin, {
      sequence_id: seq.id,
      target_tags: [{ key: 'role', value: 'web' }],
      target_tags_match_all: true,
      target_mode: 'parallel',
    });
    const command = mergeRedeploy(w.cipher, original.draft, {});
    const again = await resolveDeployment(w.deps, admin, command);
    expect(command).toMatchObject({
      sequence_id: seq.id,
      action_id: null,
      target_tags: [{ key: 'role', value: 'web' }],
      target_ids: [],
      target_tags_match_all: true,
      target_mode: 'parallel',
    });
    expect(again.draft.config).toEqual(original.draft.config);
    expect(stepsOf(again)).toEqual(stepsOf(original));
  });
});
