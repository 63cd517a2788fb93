// The agent against a protocol-faithful fake server: enrollment, the state file, lost tokens, and restarts.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandStore } from '../../../agent/state.js';
import { AGENT_VERSION } from '../../../agent/version.js';
import { startFakeAgentServer, type FakeAgentServer } from '../../support/fake-agent-server.js';
import { removeDir, startTestAgent, tempDir, until, type TestAgent } from './helpers.js';

let server: FakeAgentServer;
let dir: string;
let agents: TestAgent[];

beforeEach(async () => {
  server = await startFakeAgentServer();
  dir = await tempDir('agent-enroll-');
  agents = [];
});
afterEach(async () => {
  await Promise.all(agents.map((a) => a.agent.stop({ graceSeconds: 0 })));
  await server.close();
  await removeDir(dir);
});

const start = async (options: Partial<Parameters<typeof startTestAgent>[0]> = {}) => {
  const agent = await startTestAgent({ server: server.url, stateDir: join(dir, 'state'), ...options });
  agents.push(agent);
  return agent;
};

describe('agent enrollment', () => {
  it('enrolls once, keeps its token in a 0600 state file, and later starts reuse it without registering', async () => {
    // Prepare
    const first = await start({
      name: 'local-1',
      tags: [
        { key: 'env', value: 'local' },
        { key: 'role', value: 'web' },
      ],
    });
    await first.agent.stop();
    // Act
    const second = await start({ name: 'local-1', enrollToken: undefined });
    await until(
      'a heartbeat of the second start',
      () => server.backend.heartbeats.length > 0 && server.backend.heartbeats.at(-1)!.at > Date.now() - 1000,
    );
    // Assess
    const { target } = server.backend;
    expect(server.backend.registerCalls).toBe(1);
    expect(second.agent.targetId).toBe(target.id);
    expect(target.registration).toMatchObject({
      enrollment_token: 'det_test-enrollment',
      name: 'local-1',
      agent_version: AGENT_VERSION,
      tags: [
        { key: 'env', value: 'local' },
        { key: 'role', value: 'web' },
      ],
    });
    expect(target.registration.hostname).not.toBe('');
    expect(target.registration.os).not.toBe('');
    expect(target.registration.arch).not.toBe('');
    const file = join(dir, 'state', 'state.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      server: server.url,
      target_id: target.id,
      agent_token: target.token,
      name: 'local-1',
    });
    const log = [...first.lines, ...second.lines].join('\n');
    // the tags the server applied (its answer), not the agent's --tag list, which it says is not applied
    expect(log).toContain(`enrolled with ${server.url} as target ${target.id} (fake1), tags env=test`);
    expect(log).toContain('--tag is not applied by the server');
    expect(log).toContain(`using the enrollment in ${join(dir, 'state')} (target ${target.id})`);
    expect(log).not.toContain(target.token);
    expect(log).not.toContain('det_test-enrollment');
  });

  it('refuses to start unenrolled, or with an unknown enrollment token, with a clear error', async () => {
    // Act
    const unenrolled = start({ enrollToken: undefined });
    const refused = start({ enrollToken: 'det_wrong' });
    // Assess (both awaited together: whichever rejects first is never left without a handler)
    await Promise.all([
      expect(unenrolled).rejects.toThrow(/not enrolled yet .* start it once with --enroll TOKEN/),
      expect(refused).rejects.toThrow(/Enrollment refused .* unknown or expired/),
    ]);
  });

  it('rejects when the server cannot be reached to enroll', async () => {
    // Prepare
    await server.close();
    // Act
    const unreachable = start({ connectTimeoutSeconds: 1 });
    // Assess
    await expect(unreachable).rejects.toThrow(/Could not reach http:\/\/127\.0\.0\.1:\d+ to enroll/);
    server = await startFakeAgentServer();
  });

  it('enrolls again for another server only when given a token', async () => {
    // Prepare
    const first = await start();
    await first.agent.stop();
    const other = await startFakeAgentServer();
    try {
      // Act
      const refused = start({ server: other.url, enrollToken: undefined });
      await expect(refused).rejects.toThrow(
        `belongs to the server ${server.url}, not ${other.url}; pass --enroll TOKEN`,
      );
      const moved = await start({ server: other.url });
      // Assess
      expect(other.backend.registerCalls).toBe(1);
      expect(moved.agent.targetId).toBe(other.backend.target.id);
      expect(JSON.parse(await readFile(join(dir, 'state', 'state.json'), 'utf8')).server).toBe(other.url);
    } finally {
      await Promise.all(agents.splice(0).map((a) => a.agent.stop({ graceSeconds: 0 })));
      await other.close();
    }
  });

  it('enrolls again once when its token is refused and it has an enrollment token', async () => {
    // Prepare
    const { agent, lines } = await start();
    const oldTarget = agent.targetId;
    // Act
    server.backend.deleteTarget(oldTarget);
    await until('a new registration', () => server.backend.registerCalls === 2);
    const newTarget = server.backend.target;
    const command = server.backend.enqueue(newTarget.id, { script: 'echo still working' });
    await until('the command to complete', () => server.backend.command(command.id).completion !== undefined);
    // Assess
    expect(newTarget.id).not.toBe(oldTarget);
    expect(server.backend.output(command.id)).toBe('still working\n');
    expect(lines.join('\n')).toContain(
      'the server refused the agent token (target deleted or server data reset); enrolling again',
    );
  });

  it('exits with 1 and says why when its token is refused and it cannot enroll again', async () => {
    // Prepare
    const first = await start();
    await first.agent.stop();
    const { agent, lines } = await start({ enrollToken: undefined });
    // Act
    server.backend.deleteTarget(agent.targetId);
    const code = await agent.exited;
    // Assess
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain(
      'The server refused the agent token (the target was deleted or the server data was reset). Start the agent again with --enroll TOKEN.',
    );
    expect(server.backend.registerCalls).toBe(1);
  });
});

describe('agent restarts', () => {
  it('reports a command that was running when it stopped as lost, and re-sends an unacknowledged completion', async () => {
    // Prepare
    const first = await start();
    await first.agent.stop();
    const target = server.backend.target;
    const lost = server.backend.enqueue(target.id);
    const unreported = server.backend.enqueue(target.id);
    server.backend.command(lost.id).status = 'delivered';
    server.backend.command(unreported.id).status = 'delivered';
    const store = new CommandStore(join(dir, 'state'));
    const at = '2026-11-22T10:00:00.000Z';
    await store.save({ id: lost.id, status: 'started', deployment_id: 'dep-1', started_at: at, updated_at: at });
    await store.save({
      id: unreported.id,
      status: 'completed',
      deployment_id: 'dep-1',
      started_at: at,
      updated_at: at,
      result: { exit_code: 3, started_at: at, completed_at: at },
    });
    // Act
    await start({ enrollToken: undefined });
    server.backend.redeliver(lost.id);
    await until(
      'both completions',
      () =>
        server.backend.command(lost.id).completion !== undefined &&
        server.backend.command(unreported.id).completion !== undefined,
    );
    await until('the records to be marked reported', async () =>
      (await store.list()).every((r) => r.status === 'reported'),
    );
    // Assess
    expect(server.backend.command(lost.id).completion).toMatchObject({
      exit_code: -1,
      started_at: at,
      error_message: 'The agent restarted while the command was running',
    });
    expect(server.backend.command(unreported.id).completion).toEqual({
      exit_code: 3,
      started_at: at,
      completed_at: at,
      sign_of_life: false,
    });
    expect(server.backend.command(lost.id).chunks).toEqual([]);
  });
});
