import { describe, expect, it } from 'vitest';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { TENANT_A, TENANT_B } from '../../../../fakes/catalog.js';
import { admin, ENV_A, ENV_A2, ENV_B, fieldsOf, rejection, tenantUser, world } from './world.js';

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
});

describe('targets: scope', () => {
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
