import { describe, expect, it } from 'vitest';
import { createSolution } from '../../../../../domain/catalog/solutions.js';
import { DeploymentFrozenError, FreezeOverrideNotAllowedError } from '../../../../../domain/deployments/errors.js';
import type { CreateDeploymentCommand } from '../../../../../domain/deployments/plan/command.js';
import { checkFreezes } from '../../../../../domain/deployments/plan/freezes.js';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { delegatedCaller } from '../../../../../domain/identity/delegation.js';
import { systemRole } from '../../../../../domain/identity/permissions.js';
import { catalogCaller, TENANT_A } from '../../../../fakes/catalog.js';
import { aFreeze } from '../../../../fakes/tenancy.js';
import { admin, ENV_A, ENV_A2, fieldsOf, operator, rejection, world } from './world.js';

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

describe('freezes', () => {
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
});

describe('freezes: who may override', () => {
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
