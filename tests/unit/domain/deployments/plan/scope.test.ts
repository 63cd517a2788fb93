import { describe, expect, it } from 'vitest';
import type { CreateDeploymentCommand } from '../../../../../domain/deployments/plan/command.js';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { ForbiddenError } from '../../../../../domain/identity/errors.js';
import { TENANT_A, TENANT_B } from '../../../../fakes/catalog.js';
import { admin, ENV_A, ENV_B, ENV_GLOBAL, fieldsOf, rejection, tenantUser, world } from './world.js';

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
