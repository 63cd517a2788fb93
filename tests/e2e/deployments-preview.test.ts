// POST /api/v1/deployments/preview over HTTP, with npm start's local agents online: an action to local-1 by tag,
// a warning for an offline target, 400s for bad bodies, and a solution frozen by an active freeze (200 with a
// warning: a preview never answers DEPLOYMENT_FROZEN).
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type Reply } from '../support/http.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';

const e2e = useStackWithAgents('preview');

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });
const preview = (body: unknown) => call('POST', '/deployments/preview', e2e.admin, body);
const fields = (reply: Reply): string[] =>
  (reply.json.error?.details?.fields ?? []).map((f: { field: string }) => f.field);
const created = async (path: string, body: unknown) => {
  const reply = await call('POST', path, e2e.admin, body);
  if (reply.status !== 201) throw new Error(`POST ${path} answered ${reply.status}: ${JSON.stringify(reply.json)}`);
  return reply.json;
};
const hoursFromNow = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();

let action: { id: string; short_id: string; name: string };
const WEB = [{ key: 'role', value: 'web' }];

beforeAll(async () => {
  action = await created('/actions', {
    slug: 'restart-web',
    name: 'Restart web',
    version: {
      version: '1.0.0',
      script: 'echo restart',
      variables: [
        { name: 'API_TOKEN', secret: true, required: true },
        { name: 'MODE', default: 'soft' },
      ],
    },
  });
  await created(`/actions/${action.id}/versions`, {
    version: '1.1.0',
    script: 'echo restart $MODE',
    variables: [
      { name: 'API_TOKEN', secret: true, required: true },
      { name: 'MODE', default: 'soft' },
    ],
  });
});

describe('POST /deployments/preview', () => {
  it('plans an action on local-1 by tag: one step, the newest version, secrets masked, no warnings', async () => {
    // Act
    const reply = await preview({
      action_id: action.short_id,
      target_tags: WEB,
      variables: { API_TOKEN: 'hunter2-e2e' },
    });
    // Assess
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({
      source_type: 'action',
      source_name: 'Restart web',
      source_version: '1.1.0',
      target_summary: { total: 1, online: 1, offline: 0, stale: 0 },
      variables: { API_TOKEN: '***', MODE: 'soft' },
      warnings: [],
      active_freezes: [],
    });
    expect(reply.json.plan).toMatchObject({
      target_count: 1,
      tenant_name: null,
      environment_name: null,
      resolved_variables: { API_TOKEN: '***', MODE: 'soft' },
    });
    expect(
      reply.json.plan.steps.map((s: Record<string, unknown>) => [
        s['target_name'],
        s['action_id'],
        s['action_version'],
        s['sequence_order'],
        s['action_order'],
        s['state'],
      ]),
    ).toEqual([['local-1', action.id, '1.1.0', 1, 1, 'pending']]);
    expect(JSON.stringify(reply.json)).not.toContain('hunter2-e2e');
  });

  it('picks the version a range selects (~1.0), and both local agents with OR-ed tags', async () => {
    const reply = await preview({
      action_id: action.id,
      version_requirement: '~1.0',
      target_tags: [...WEB, { key: 'role', value: 'db' }],
      prompted_values: { API_TOKEN: 'x' },
    });
    expect(reply.status).toBe(200);
    expect(reply.json.plan.steps.map((s: Record<string, unknown>) => [s['target_name'], s['action_version']])).toEqual([
      ['local-1', '1.0.0'],
      ['local-2', '1.0.0'],
    ]);
  });

  it('warns about an offline target and counts it in target_summary', async () => {
    // Prepare: a web target whose agent was last seen ten minutes ago
    const { targetsDeps } = await import('../../functions/shared/targets-wiring.js');
    const seen = new Date(Date.now() - 600_000).toISOString();
    await targetsDeps().targets.create({
      id: '0ff11e00-0000-4000-8000-000000000001',
      shortId: 'offweb1',
      name: 'old-web',
      hostname: 'old-web.example',
      os: 'linux',
      arch: 'x64',
      agentVersion: '1.0.0',
      tags: WEB,
      tenantId: null,
      environmentId: null,
      agentTokenHash: 'e2e-preview-offline-target',
      lastHeartbeatAt: seen,
      createdAt: seen,
      updatedAt: seen,
    });
    // Act
    const reply = await preview({ action_id: action.id, target_tags: WEB, variables: { API_TOKEN: 'x' } });
    // Assess
    expect(reply.status).toBe(200);
    expect(reply.json.target_summary).toEqual({ total: 2, online: 1, offline: 1, stale: 0 });
    expect(reply.json.plan.steps.map((s: Record<string, unknown>) => s['target_name'])).toEqual(['local-1', 'old-web']);
    expect(reply.json.warnings).toEqual([`Target 'old-web' is offline: its agent was last seen 10 min ago (${seen}).`]);
  });

  it('answers 400 with the right code and fields for bad bodies', async () => {
    const cases: [unknown, number, string, string[]][] = [
      [{ target_tags: WEB }, 400, 'VALIDATION_ERROR', ['solution_id', 'sequence_id', 'action_id']],
      [
        { action_id: action.id, sequence_id: 'x', target_tags: WEB },
        400,
        'VALIDATION_ERROR',
        ['sequence_id', 'action_id'],
      ],
      [{ action_id: action.id }, 400, 'VALIDATION_ERROR', ['target_ids', 'target_tags']],
      [{ action_id: action.id, target_tags: WEB, tenant_id: 'acme' }, 400, 'MISSING_FIELD', ['environment_id']],
      [{ action_id: action.id, target_tags: WEB, override_freeze: true }, 400, 'MISSING_FIELD', ['override_reason']],
      [{ action_id: action.id, target_tags: WEB, priority: 101 }, 400, 'VALIDATION_ERROR', ['priority']],
      [{ action_id: 'nope', target_tags: WEB }, 400, 'VALIDATION_ERROR', ['action_id']],
      [
        { action_id: action.id, target_tags: [{ key: 'role', value: 'mainframe' }], variables: { API_TOKEN: 'x' } },
        400,
        'VALIDATION_ERROR',
        ['target_tags'],
      ],
      [
        { action_id: action.id, target_tags: WEB, version_requirement: '^9', variables: { API_TOKEN: 'x' } },
        400,
        'VALIDATION_ERROR',
        ['version_requirement'],
      ],
      [{ action_id: action.id, target_tags: WEB }, 400, 'VALIDATION_ERROR', ['variables.API_TOKEN']],
    ];
    for (const [body, status, code, named] of cases) {
      const reply = await preview(body);
      expect([body, reply.status, reply.json.error?.code, fields(reply)]).toEqual([body, status, code, named]);
    }
    expect(
      (await call('POST', '/deployments/preview', undefined, { action_id: action.id, target_tags: WEB })).status,
    ).toBe(401);
  });

  it('a frozen solution still previews (200) with a warning and the active freeze', async () => {
    // Prepare: a solution of a sequence of the action, and a freeze on that solution in force now
    const sequence = await created('/sequences', {
      name: 'Web release',
      steps: [{ action_id: action.id, version_requirement: '^1.0.0' }],
    });
    const solution = await created('/solutions', { name: 'Web platform', sequences: [{ sequence_id: sequence.id }] });
    const freeze = await created('/deployment-freezes', {
      name: 'Year end',
      reason: 'change freeze',
      start_time: hoursFromNow(-1),
      end_time: hoursFromNow(2),
      solution_id: solution.id,
    });
    // Act
    const local1 = e2e.agents[0]!.targetId; // LOCAL_AGENTS order: local-1, local-2
    const reply = await preview({
      solution_id: solution.short_id,
      target_ids: [local1],
      variables: { API_TOKEN: 'x' },
    });
    // Assess
    expect(reply.status).toBe(200);
    expect([reply.json.source_type, reply.json.source_name, reply.json.source_version]).toEqual([
      'solution',
      'Web platform',
      '1.0.0',
    ]);
    expect(
      reply.json.plan.steps.map((s: Record<string, unknown>) => [
        s['target_name'],
        s['sequence_name'],
        s['sequence_order'],
        s['action_version'],
      ]),
    ).toEqual([['local-1', 'Web release', 1, '1.1.0']]);
    expect(reply.json.active_freezes).toEqual([{ id: freeze.id, name: 'Year end', ends_at: freeze.end_time }]);
    expect(reply.json.warnings).toContain(
      `Deployments are frozen by 'Year end' until ${freeze.end_time} (change freeze).`,
    );
  });
});
