import { describe, expect, it } from 'vitest';
import { previewDeployment } from '../../../../../domain/deployments/plan/preview.js';
import { aFreeze } from '../../../../fakes/tenancy.js';
import { admin, NOW, operator, world } from './world.js';

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
