// The execution engine with the real local agents: deployments run to success or failure per target mode and
// failure strategy, retries, the overall timeout, and a cancel that kills the running command.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';

const e2e = useStackWithAgents('exec');

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token: e2e.admin, body });

let n = 0;
/** A new action with one version running `script`; its id. */
const action = async (script: string): Promise<string> => {
  n += 1;
  const created = await call('POST', '/actions', {
    slug: `act-${n}`,
    name: `Action ${n}`,
    version: { version: '1.0.0', script },
  });
  expect(created.status).toBe(201);
  return created.json.id;
};
const sequence = async (actionIds: string[]): Promise<string> =>
  (await call('POST', '/sequences', { name: `seq-${(n += 1)}`, steps: actionIds.map((id) => ({ action_id: id })) }))
    .json.id;

const finished = async (id: string, withinMs = 40_000) => {
  const until = Date.now() + withinMs;
  for (;;) {
    const d = (await call('GET', `/deployments/${id}`)).json;
    if (['success', 'failed', 'cancelled', 'rolled_back'].includes(d.state)) return d;
    if (Date.now() > until)
      throw new Error(
        `deployment still ${d.state}: ${JSON.stringify(d.plan.steps.map((s: { state: string }) => s.state))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
const deploy = async (body: Record<string, unknown>) => {
  const created = await call('POST', '/deployments', body);
  expect([created.status, created.json.error]).toEqual([201, undefined]);
  return created.json.deployment_id as string;
};
const web = { target_tags: [{ key: 'role', value: 'web' }] };
const both = { target_tags: [{ key: 'env', value: 'local' }] };

describe('the execution engine', () => {
  it('runs an action on local-1 to success: step completed, progress 1, instance freed', async () => {
    const id = await deploy({ action_id: await action('echo "hello from $DEPLOYER_ACTION_SLUG"'), ...web });
    const done = await finished(id);
    expect(done).toMatchObject({
      state: 'success',
      progress: 1,
      completed_steps: 1,
      failed_steps: 0,
      error_message: null,
      duration_ms: expect.any(Number),
    });
    expect(done.plan.steps[0]).toMatchObject({
      state: 'completed',
      exit_code: 0,
      target_name: 'local-1',
      started_at: expect.any(String),
      completed_at: expect.any(String),
    });
    expect((await call('GET', '/admin/orchestration')).json.in_use).toBe(0);
  });

  it('runs on both targets in parallel', async () => {
    const started = Date.now();
    const id = await deploy({ action_id: await action('sleep 2'), ...both, target_mode: 'parallel' });
    const done = await finished(id);
    expect(done).toMatchObject({ state: 'success', completed_steps: 2 });
    const [a, b] = done.plan.steps;
    expect(
      Date.parse(a.started_at) < Date.parse(b.completed_at) && Date.parse(b.started_at) < Date.parse(a.completed_at),
    ).toBe(true);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('runs one target after the other in sequential mode', async () => {
    const id = await deploy({ action_id: await action('sleep 1'), ...both, target_mode: 'sequential' });
    const [a, b] = (await finished(id)).plan.steps;
    expect(Date.parse(b.started_at)).toBeGreaterThanOrEqual(Date.parse(a.completed_at));
  });

  it('runs batch after batch in rolling mode', async () => {
    const id = await deploy({
      action_id: await action('sleep 1'),
      ...both,
      target_mode: { rolling: { batch_size: 1 } },
    });
    const done = await finished(id);
    expect(done).toMatchObject({ state: 'success', completed_steps: 2 });
    const [a, b] = done.plan.steps;
    expect(Date.parse(b.started_at)).toBeGreaterThanOrEqual(Date.parse(a.completed_at));
  });

  // An agent runs each command in <state dir>/work/<command id>, and the state dir is named after the agent: a
  // script can tell local-1 from local-2 by its working directory.
  const failOnLocal2 = (code: number) => `case "$PWD" in */local-2/*) exit ${code};; esac; echo ok`;

  it('continue_on_failure: the failing target stops, the other goes on, the deployment fails at the end', async () => {
    const id = await deploy({
      sequence_id: await sequence([await action(failOnLocal2(5)), await action('echo second')]),
      ...both,
      target_mode: 'parallel',
      failure_strategy: 'continue_on_failure',
    });
    const done = await finished(id);
    const byTarget = (name: string) =>
      done.plan.steps
        .filter((s: { target_name: string }) => s.target_name === name)
        .map((s: { state: string }) => s.state);
    expect([done.state, done.failed_steps, byTarget('local-1'), byTarget('local-2')]).toEqual([
      'failed',
      1,
      ['completed', 'completed'],
      ['failed', 'skipped'],
    ]);
  });

  it('failed_target_only: rolls back only on the target that failed', { timeout: 60_000 }, async () => {
    const log = join(e2e.dir, `rollback-target-${Date.now()}.log`);
    n += 1;
    const undoable = await call('POST', '/actions', {
      slug: `undo-target-${n}`,
      name: 'Undoable',
      version: {
        version: '1.0.0',
        script: 'echo do',
        rollback_script: `basename "$(dirname "$(dirname "$PWD")")" >> ${log}`,
      },
    });
    const id = await deploy({
      sequence_id: await sequence([undoable.json.id, await action(failOnLocal2(6))]),
      ...both,
      target_mode: 'parallel',
      failure_strategy: 'continue_on_failure',
      rollback_strategy: 'failed_target_only',
    });
    const done = await finished(id);
    expect(done.state).toBe('rolled_back');
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual(['local-2']);
  });

  it('stop_on_first_failure: the failed step ends the deployment and later steps are skipped', async () => {
    const id = await deploy({
      sequence_id: await sequence([await action('echo broken >&2; exit 3'), await action('echo never')]),
      ...web,
    });
    const done = await finished(id);
    expect(done).toMatchObject({
      state: 'failed',
      failed_steps: 1,
      completed_steps: 0,
      error_message: expect.stringMatching(/failed/),
    });
    expect(done.plan.steps.map((s: { state: string; exit_code: number | null }) => [s.state, s.exit_code])).toEqual([
      ['failed', 3],
      ['skipped', null],
    ]);
  });

  it('ignore_failures: everything runs and the deployment succeeds with failed_steps counted', async () => {
    const id = await deploy({
      sequence_id: await sequence([await action('exit 1'), await action('echo fine')]),
      ...web,
      failure_strategy: 'ignore_failures',
    });
    const done = await finished(id);
    expect(done).toMatchObject({ state: 'success', failed_steps: 1, completed_steps: 1 });
  });

  it('retries a failing command up to max_retries', async () => {
    const marker = join(e2e.dir, `marker-${Date.now()}`);
    const id = await deploy({
      action_id: await action(`if [ -f ${marker} ]; then echo second; else touch ${marker}; exit 1; fi`),
      ...web,
      max_retries: 2,
    });
    const done = await finished(id);
    expect(done).toMatchObject({ state: 'success' });
    expect(done.plan.steps[0]).toMatchObject({ state: 'completed', retry_count: 1, exit_code: 0 });
  });

  it('cancel during a run kills the running command', async () => {
    const id = await deploy({ action_id: await action('echo started; sleep 60'), ...web });
    const deps = (await import('../../functions/shared/targets-wiring.js')).targetsDeps();
    const until = Date.now() + 20_000;
    while ((await deps.commands.listByDeployment(id)).every((c) => c.status !== 'delivered')) {
      if (Date.now() > until) throw new Error('the command was never delivered');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await call('POST', `/deployments/${id}/cancel`, { reason: 'stop it' })).json.state).toBe('cancelled');
    const killed = Date.now() + 20_000;
    for (;;) {
      const [command] = await deps.commands.listByDeployment(id);
      if (command?.status === 'completed') {
        expect(command.result?.exitCode).toBe(130);
        break;
      }
      if (Date.now() > killed) throw new Error(`the command is still ${command?.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  it('rolls back the executed steps in reverse order, then ends rolled_back', async () => {
    // Prepare: step 1 succeeds and can be undone, step 2 fails
    const log = join(e2e.dir, `rollback-${Date.now()}.log`);
    n += 1;
    const undoable = await call('POST', '/actions', {
      slug: `undoable-${n}`,
      name: 'Undoable',
      version: { version: '1.0.0', script: `echo do >> ${log}`, rollback_script: `echo undo >> ${log}` },
    });
    const id = await deploy({
      sequence_id: await sequence([undoable.json.id, await action('exit 4')]),
      ...web,
      rollback_strategy: 'all_executed',
    });
    // Act
    const done = await finished(id);
    // Assess
    expect(done).toMatchObject({ state: 'rolled_back', failed_steps: 1 });
    expect(
      done.plan.steps.map((s: { state: string; rollback_of?: string }) => [s.state, s.rollback_of !== undefined]),
    ).toEqual([
      ['completed', false],
      ['failed', false],
      ['completed', true],
    ]);
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual(['do', 'undo']);
  });

  it('streams the run live: ping, the output lines, step_update, progress, then the final state_change and the close', async () => {
    // Prepare: the stream opens before the command has run
    const id = await deploy({
      action_id: await action('echo first line; sleep 1; echo "to stderr" >&2; echo last line'),
      ...web,
    });
    const sse = (await call('POST', '/auth/sse-token', {})).json.sse_token;
    // Act: read the stream to its end (the server closes it after the terminal state_change)
    const response = await fetch(`${e2e.stack.baseUrl}/api/v1/deployments/${id}/logs?sse_token=${sse}`, {
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    // Assess
    const frames = text.split('\n\n').filter((b) => b.includes('data:'));
    expect(text).not.toMatch(/^event:/m);
    const messages = frames.map(
      (f) =>
        JSON.parse(
          f
            .split('\n')
            .find((l) => l.startsWith('data: '))!
            .slice(6),
          // eslint-disable-next-line @typescript-eslint/no-explicit-any
        ) as { event: string; data: Record<string, any> },
    );
    expect(messages[0]).toEqual({ event: 'ping', data: { type: 'ping' } });
    expect(messages.every((m) => m.data.type === m.event)).toBe(true);
    const lines = messages
      .filter((m) => m.event === 'log')
      .map((m) => [m.data.log.message, m.data.log.metadata.stream, m.data.log.target_name]);
    expect(lines).toEqual([
      ['first line', 'stdout', 'local-1'],
      ['to stderr', 'stderr', 'local-1'],
      ['last line', 'stdout', 'local-1'],
    ]);
    const completed = messages.find((m) => m.event === 'step_update' && m.data.state === 'completed');
    expect(completed?.data).toMatchObject({ exit_code: 0, output: expect.stringContaining('last line') });
    expect(messages.some((m) => m.event === 'progress' && m.data.progress === 1)).toBe(true);
    expect(messages.at(-1)).toMatchObject({
      event: 'state_change',
      data: { old_state: 'running', new_state: 'success', deployment_id: id },
    });
    const ids = frames.filter((f) => f.includes('id: ')).map((f) => Number(/id: (\d+)/.exec(f)![1]));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    const history = (await call('GET', `/deployments/${id}/logs/history?limit=100`)).json;
    expect(history).toHaveLength(ids.length);
  });

  it('shows command results in analysis: a failing command’s stderr tail, cut to its last 2000 characters', async () => {
    // Prepare: 2500 characters on stderr ending in a marker, then exit 2; retried once
    const script = `node -e 'process.stderr.write("a".repeat(2490) + "END-OF-ERR\\n")'; exit 2`;
    const id = await deploy({ action_id: await action(script), ...web, max_retries: 1 });
    await finished(id);
    // Act
    const results = (await call('GET', `/deployments/${id}/analysis`)).json;
    // Assess
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result).toMatchObject({
        status: 'failed',
        exit_code: 2,
        target_name: 'local-1',
        started_at: expect.any(String),
        duration_ms: expect.any(Number),
      });
      expect(result.stderr_tail).toHaveLength(2000);
      expect(result.stderr_tail.endsWith('END-OF-ERR\n')).toBe(true);
      expect(result).not.toHaveProperty('stdout_tail');
    }
    expect(Date.parse(results[0].started_at)).toBeLessThanOrEqual(Date.parse(results[1].started_at));
    for (const result of results)
      expect([result.started_at, result.completed_at]).toEqual([
        expect.stringMatching(/\+00:00$/),
        expect.stringMatching(/\+00:00$/),
      ]);
    expect((await call('GET', '/deployments/nope/analysis')).status).toBe(404);
  });

  it(
    'fails the step of a target whose agent never answers, within about a minute, naming it',
    { timeout: 150_000 },
    async () => {
      // Prepare: a target enrolled by hand whose agent never polls (its registration counts as its last heartbeat)
      const { token } = (await call('POST', '/targets/enrollment-tokens', { tags: [{ key: 'role', value: 'ghost' }] }))
        .json;
      const ghost = await api.call('POST', '/api/v1/agent/register', {
        body: {
          enrollment_token: token,
          name: 'ghost',
          hostname: 'ghost',
          os: 'linux',
          arch: 'x64',
          agent_version: '1.0.0',
          tags: [{ key: 'role', value: 'ghost' }],
        },
      });
      expect(ghost.status).toBe(201);
      const started = Date.now();
      // Act
      const id = await deploy({
        action_id: await action('echo never runs'),
        target_tags: [{ key: 'role', value: 'ghost' }],
      });
      const done = await finished(id, 120_000);
      // Assess: 60 s without a heartbeat, plus at most one 10 s engine check
      expect(done).toMatchObject({ state: 'failed' });
      expect(done.plan.steps[0].error_message).toMatch(
        /Target ghost is not answering: its agent has not been heard from for 60 s/,
      );
      expect(Date.now() - started).toBeLessThan(90_000);
    },
  );

  it('fails the deployment at its overall timeout and stops the command', async () => {
    const id = await deploy({ action_id: await action('sleep 60'), ...web, deployment_timeout_seconds: 2 });
    const done = await finished(id, 40_000);
    expect(done).toMatchObject({ state: 'failed', error_message: expect.stringMatching(/timed out/) });
  });
});
