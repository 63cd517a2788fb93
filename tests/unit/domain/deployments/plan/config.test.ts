import { describe, expect, it } from 'vitest';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { admin, world } from './world.js';

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
