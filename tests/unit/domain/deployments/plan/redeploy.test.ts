import { describe, expect, it } from 'vitest';
import { createVersion } from '../../../../../domain/catalog/actions.js';
import {
  checkSecretReuse,
  inheritedVariables,
  mergeRedeploy,
} from '../../../../../domain/deployments/plan/redeploy.js';
import { resolveDeployment } from '../../../../../domain/deployments/plan/resolve.js';
import { delegatedCaller } from '../../../../../domain/identity/delegation.js';
import { systemRole } from '../../../../../domain/identity/permissions.js';
import { openVariable } from '../../../../../domain/shared/variable-secrets.js';
import { catalogCaller, TENANT_A } from '../../../../fakes/catalog.js';
import { callerWith } from '../../../../fakes/tenancy.js';
import { admin, ENV_A, fieldsOf, operator, rejection, stepsOf, tenantUser, world } from './world.js';

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
});

describe('mergeRedeploy: secrets', () => {
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
