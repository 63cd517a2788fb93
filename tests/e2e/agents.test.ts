// Targets and the agent protocol over HTTP, with the real agent running real commands: enrollment, heartbeats,
// command delivery (a command created through the domain layer until the orchestrator exists), output with a
// masked secret, a timeout that kills the process group, isolation between agents, and `npm start`'s two agents.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueCommand, type NewCommand } from '../../domain/targets/commands.js';
import type { Command } from '../../domain/targets/types.js';
import { spawnAgent, startLocalAgents, writeAgentBundle, type LocalAgent } from '../../local/agents.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('agents');
let dir = '';
const agents: LocalAgent[] = [];

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const quietLog = () => undefined;

const wiring = async () => (await import('../../functions/shared/targets-wiring.js')).targetsDeps();

/** A command for `targetId`, queued as the orchestrator will queue them. */
const enqueue = async (targetId: string, overrides: Partial<NewCommand> = {}): Promise<Command> =>
  enqueueCommand(await wiring(), {
    targetId,
    deploymentId: 'deployment-1',
    stepId: `step-${Math.random().toString(36).slice(2, 8)}`,
    attempt: 1,
    action: { id: 'action-1', slug: 'hello', version: '1.0.0' },
    script: 'echo "hello $GREETING"; echo "token=$API_TOKEN"; echo oops >&2',
    interpreter: 'sh',
    variables: { GREETING: 'world', API_TOKEN: 'hunter2-secret' },
    secretVariables: ['API_TOKEN'],
    timeoutSeconds: 30,
    ...overrides,
  });

const finished = async (id: string, withinMs = 30_000): Promise<Command> => {
  const deps = await wiring();
  const until = Date.now() + withinMs;
  for (;;) {
    const command = await deps.commands.get(id);
    if (command?.status === 'completed') return command;
    if (Date.now() > until) throw new Error(`command ${id} is still ${command?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const outputOf = async (id: string): Promise<string> =>
  (await (await wiring()).commands.output(id)).map((c) => c.data).join('');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'deployer-agents-'));
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('enrollment tokens', () => {
  it('are created by users with targets:create only, shown once, bounded', async () => {
    const created = await call('POST', '/targets/enrollment-tokens', e2e.admin, { expires_in_hours: 1 });
    expect(created.status).toBe(201);
    expect(created.json.token).toMatch(/^det_/);
    expect(Date.parse(created.json.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect(
      (await call('POST', '/targets/enrollment-tokens', e2e.admin, { expires_in_hours: 0 })).json.error,
    ).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await call('POST', '/targets/enrollment-tokens', undefined, {})).status).toBe(401);
    await createUser('viewer@example.com', 'viewer-password', ['user']);
    const viewer = (await api.login({ email: 'viewer@example.com', password: 'viewer-password' })).token;
    expect((await call('POST', '/targets/enrollment-tokens', viewer, {})).json.error.code).toBe(
      'INSUFFICIENT_PERMISSIONS',
    );
    expect((await call('GET', '/targets', viewer)).status).toBe(200);
  });

  it('refuses registration with an unknown token', async () => {
    const reply = await call('POST', '/agent/register', undefined, {
      enrollment_token: 'det_nope',
      name: 'x',
      hostname: 'x',
      os: 'linux',
      arch: 'x64',
      agent_version: '1.0.0',
      tags: [],
    });
    expect([reply.status, reply.json.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
  });
});

describe('an agent started with an enrollment token', () => {
  let agent: LocalAgent;

  beforeAll(async () => {
    const { token } = (
      await call('POST', '/targets/enrollment-tokens', e2e.admin, { tags: [{ key: 'role', value: 'web' }] })
    ).json;
    // What ships: the one-file agent the stack serves, run by this Node from a folder outside the checkout.
    agent = await spawnAgent({
      bundle: await writeAgentBundle(e2e.stack, dir),
      cwd: dir,
      args: [
        '--server',
        e2e.stack.baseUrl,
        '--name',
        'e2e-web',
        '--tag',
        'role=web',
        '--state-dir',
        join(dir, 'e2e-web'),
        '--poll-wait-seconds',
        '5',
      ],
      enrollToken: token,
      log: quietLog,
    });
    agents.push(agent);
  });

  it('appears online with its tags, by id and short id, and can be renamed and retagged', async () => {
    const list = await call('GET', '/targets?tag=role=web', e2e.admin);
    const target = list.json.data.find((t: { id: string }) => t.id === agent.targetId);
    expect(target).toMatchObject({
      name: 'e2e-web',
      status: 'online',
      tags: [{ key: 'role', value: 'web' }],
      agent_version: expect.any(String),
    });
    expect((await call('GET', `/targets/${target.short_id}`, e2e.admin)).json.id).toBe(agent.targetId);
    const renamed = await call('PUT', `/targets/${agent.targetId}`, e2e.admin, {
      name: 'e2e-web-1',
      tags: [
        { key: 'role', value: 'web' },
        { key: 'tier', value: '1' },
      ],
    });
    expect(renamed.json).toMatchObject({
      name: 'e2e-web-1',
      tags: [
        { key: 'role', value: 'web' },
        { key: 'tier', value: '1' },
      ],
    });
    expect(
      (await call('PUT', `/targets/${agent.targetId}`, e2e.admin, { tags: [{ key: '', value: 'x' }] })).status,
    ).toBe(400);
    expect((await call('GET', '/targets/nope', e2e.admin)).status).toBe(404);
  });

  it('runs a command end to end: variables in the environment, the secret masked, both streams, exit code', async () => {
    // Act
    const command = await enqueue(agent.targetId);
    const done = await finished(command.id);
    // Assess
    expect(done.result).toMatchObject({ exitCode: 0, errorMessage: null });
    const output = await outputOf(command.id);
    expect(output).toContain('hello world');
    expect(output).toContain('token=***');
    expect(output).not.toContain('hunter2-secret');
    const chunks = await (await wiring()).commands.output(command.id);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.some((c) => c.stream === 'stderr' && c.data.includes('oops'))).toBe(true);
  });

  it('kills a command that outlives its timeout and reports exit code 124', async () => {
    const started = Date.now();
    const command = await enqueue(agent.targetId, { script: 'echo start; sleep 30; echo never', timeoutSeconds: 1 });
    const done = await finished(command.id);
    expect(done.result?.exitCode).toBe(124);
    expect(done.result?.errorMessage).toMatch(/timed out/i);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await outputOf(command.id)).not.toContain('never');
  });

  it('reports a failing command’s exit code and stderr', async () => {
    const command = await enqueue(agent.targetId, {
      script: 'echo "disk full" >&2; exit 3',
      variables: {},
      secretVariables: [],
    });
    expect((await finished(command.id)).result?.exitCode).toBe(3);
    expect(await outputOf(command.id)).toContain('disk full');
  });
});

describe('agent credentials', () => {
  const register = async (name: string) => {
    const { token } = (await call('POST', '/targets/enrollment-tokens', e2e.admin, {})).json;
    const reply = await call('POST', '/agent/register', undefined, {
      enrollment_token: token,
      name,
      hostname: name,
      os: 'linux',
      arch: 'x64',
      agent_version: '1.0.0',
      tags: [],
    });
    expect(reply.status).toBe(201);
    return reply.json as { target_id: string; agent_token: string };
  };

  it('work only on /agent/*, only for their own target; user credentials are refused there', async () => {
    // Prepare
    const one = await register('iso-1');
    const two = await register('iso-2');
    const command = await enqueue(one.target_id);
    // Act + Assess: delivery only to its own target
    expect((await call('GET', '/agent/commands?wait=0', two.agent_token)).json).toEqual({ commands: [], cancel: [] });
    const delivered = await call('GET', '/agent/commands?wait=0', one.agent_token);
    expect(delivered.json.commands.map((c: { id: string }) => c.id)).toEqual([command.id]);
    const chunk = { chunks: [{ stream: 'stdout', data: 'x', seq: 0 }] };
    expect((await call('POST', `/agent/commands/${command.id}/output`, two.agent_token, chunk)).status).toBe(404);
    expect(
      (
        await call('POST', `/agent/commands/${command.id}/complete`, two.agent_token, {
          exit_code: 0,
          started_at: new Date().toISOString(),
          completed_at: new Date().toISOString(),
        })
      ).status,
    ).toBe(404);
    // sign_of_life is a boolean or absent: anything else is refused before anything is written
    const badReport = { exit_code: 0, started_at: new Date().toISOString(), completed_at: new Date().toISOString() };
    for (const sign of ['no', null, 1]) {
      const refused = await call('POST', `/agent/commands/${command.id}/complete`, one.agent_token, {
        ...badReport,
        sign_of_life: sign,
      });
      expect([refused.status, refused.json.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect((await call('POST', `/agent/commands/${command.id}/output`, one.agent_token, chunk)).json).toEqual({
      accepted: 1,
      cancel_requested: false,
    });
    // credentials in the wrong place
    expect((await call('GET', '/targets', one.agent_token)).json.error.code).toBe('INVALID_TOKEN');
    expect((await call('POST', '/agent/heartbeat', e2e.admin, {})).json.error.code).toBe('INVALID_TOKEN');
    expect((await call('POST', '/agent/heartbeat', undefined, {})).status).toBe(401);
    expect((await call('POST', '/agent/heartbeat', one.agent_token, {})).json.server_time).toEqual(expect.any(String));
    // a deleted target's token stops working at once
    expect((await call('DELETE', `/targets/${one.target_id}`, e2e.admin)).status).toBe(204);
    expect((await call('POST', '/agent/heartbeat', one.agent_token, {})).status).toBe(401);
    expect((await call('DELETE', `/targets/${one.target_id}`, e2e.admin)).status).toBe(404);
  });

  it('a long poll answers as soon as a command arrives', async () => {
    const one = await register('poller');
    const started = Date.now();
    const poll = call('GET', '/agent/commands?wait=15&max=1', one.agent_token);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const command = await enqueue(one.target_id);
    const reply = await poll;
    expect(reply.json.commands.map((c: { id: string }) => c.id)).toEqual([command.id]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('npm start’s local agents', () => {
  it('enroll local-1 (env=local, role=web) and local-2 (env=local, role=db), online, and keep their targets on restart', async () => {
    // Act
    const first = await startLocalAgents(e2e.stack, join(dir, 'local'), quietLog);
    await Promise.all(first.map((a) => a.stop({ graceSeconds: 1 })));
    const second = await startLocalAgents(e2e.stack, join(dir, 'local'), quietLog);
    agents.push(...second);
    // Assess
    expect(second.map((a) => a.targetId)).toEqual(first.map((a) => a.targetId));
    // The stop said goodbye (offline at once); the restarted agents are online from their first word, which follows
    // their start by a moment.
    const listed = async () => {
      const targets = (await call('GET', '/targets?tag=env=local&limit=100', e2e.admin)).json.data;
      const byName = [...targets].sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name));
      return byName.map((t: { name: string; status: string; tags: unknown }) => [t.name, t.status, t.tags]);
    };
    await expect.poll(listed, { timeout: 15_000 }).toEqual([
      [
        'local-1',
        'online',
        [
          { key: 'env', value: 'local' },
          { key: 'role', value: 'web' },
        ],
      ],
      [
        'local-2',
        'online',
        [
          { key: 'env', value: 'local' },
          { key: 'role', value: 'db' },
        ],
      ],
    ]);
  });
});
