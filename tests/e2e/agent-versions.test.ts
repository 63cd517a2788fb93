// Component compatibility over HTTP and the real WebSocket against the local stack (issue 30, "Version
// compatibility"; api.md, "Versioning", point 3): an agent of another major version than the server's is refused with
// 409 AGENT_VERSION_INCOMPATIBLE naming both versions at register, on every agent call and at the handshake, and what
// it aimed at is unchanged (no token use, no heartbeat, no claimed command, no connection); 1.x agents are taken; the
// target list shows the version and whether it is compatible; the real one-file agent (run from a temporary folder)
// is taken, and the same sources built as 2.0.0 are refused at enrollment and, already enrolled, log the refusal and
// exit 1. GET /api/v1/server/info names the accepted range.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AGENT_VERSION } from '../../agent/version.js';
import { enqueueCommand } from '../../domain/targets/commands.js';
import { spawnAgent, writeAgentBundle, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { buildProgram } from '../../programs/build.js';
import pkg from '../../package.json' with { type: 'json' };
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const HEADER = 'x-deployer-agent-version';
let stack: Stack;
let admin: string;
let dir = '';
const agents: LocalAgent[] = [];

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown, version?: string) =>
  api.call(method, `/api/v1${path}`, {
    ...(token === undefined ? {} : { token }),
    body,
    ...(version === undefined ? {} : { headers: { [HEADER]: version } }),
  });
const wiring = async () => (await import('../../functions/shared/targets-wiring.js')).targetsDeps();

const enrollmentToken = async () =>
  (await call('POST', '/targets/enrollment-tokens', admin, { expires_in_hours: 1 })).json as {
    id: string;
    token: string;
  };
const usesOf = async (tokenId: string) =>
  ((await call('GET', '/targets/enrollment-tokens?limit=100', admin)).json.data as { id: string; uses: number }[]).find(
    (t) => t.id === tokenId,
  )?.uses;
const registration = (token: string, name: string, agentVersion: string) => ({
  enrollment_token: token,
  name,
  hostname: `${name}.example`,
  os: 'linux',
  arch: 'x64',
  agent_version: agentVersion,
  tags: [],
});
const enroll = async (name: string) => {
  const registered = await call(
    'POST',
    '/agent/register',
    undefined,
    registration((await enrollmentToken()).token, name, '1.0.0'),
  );
  expect(registered.status).toBe(201);
  return { targetId: registered.json.target_id as string, token: registered.json.agent_token as string };
};
const target = async (id: string) => (await call('GET', `/targets/${id}`, admin)).json;

/** The refusal every surface answers to a 2.0.0 agent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const expectRefused = (reply: { status: number; json: any }, claimed = '2.0.0') => {
  expect(reply.status).toBe(409);
  expect(reply.json.error).toMatchObject({
    code: 'AGENT_VERSION_INCOMPATIBLE',
    details: { agent_version: claimed, accepted: '>=1.0.0 <2.0.0', server_version: pkg.version },
  });
  expect(reply.json.error.message).toContain(`Agent ${claimed}`);
  expect(reply.json.error.message).toContain(`server ${pkg.version}`);
};

/** Opens the agents' WebSocket with the given headers: 'open', or the status of the refused handshake. */
const handshake = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: 'open'; ws: WebSocket } | { status: number }>((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => resolve({ status: 'open', ws }));
    ws.on('unexpected-response', (_request, response) => {
      resolve({ status: response.statusCode ?? 0 });
      ws.terminate();
    });
    ws.on('error', (error) => reject(error));
  });

/**
 * The one-file agent, run by this Node from a folder outside the checkout: the stack's build, or `version` (the same
 * sources built as another version, e.g. 2.0.0). Resolves with the agent once started, or with its exit code and
 * lines when it exits first.
 */
const runBundle = async (
  name: string,
  options: { version?: string; enrollToken?: string; log?: (line: string) => void } = {},
): Promise<{ agent?: LocalAgent; exitCode?: number; lines: string[] }> => {
  const folder = join(dir, `bundle-${options.version ?? 'stack'}`);
  let bundle = join(folder, 'deployer-agent.mjs');
  if (options.version === undefined) bundle = await writeAgentBundle(stack, folder);
  else {
    const built = await buildProgram('agent', { version: options.version });
    await mkdir(folder, { recursive: true });
    await writeFile(bundle, built.files.get(built.release.path)!.contents, { mode: 0o755 });
  }
  const lines: string[] = [];
  try {
    const agent = await spawnAgent({
      bundle,
      cwd: folder,
      args: ['--server', stack.baseUrl, '--name', name, '--state-dir', join(dir, name)],
      ...(options.enrollToken === undefined ? {} : { enrollToken: options.enrollToken }),
      log: (line) => {
        lines.push(line);
        options.log?.(line);
      },
    });
    agents.push(agent);
    return { agent, lines };
  } catch (error) {
    const code = /exited with code (\d+)/.exec((error as Error).message)?.[1];
    if (code === undefined) throw error;
    return { exitCode: Number(code), lines };
  }
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'deployer-versions-'));
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('versions')}-`, bootstrapAdmin: ADMIN });
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 0 })));
  await stack?.stop();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('GET /api/v1/server/info', () => {
  it('names the agent versions it takes and the engine version, equal to the server version', async () => {
    const info = await call('GET', '/server/info');
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({
      server_version: pkg.version,
      engine_version: pkg.version,
      agent_versions: '>=1.0.0 <2.0.0',
    });
  });
});

describe('POST /api/v1/agent/register', () => {
  it('refuses an agent 2.0.0 and 0.9.0 with the message, and the token keeps its use: no target is made', async () => {
    // Arrange
    const token = await enrollmentToken();
    const before = (await call('GET', '/targets?limit=100', admin)).json.meta.total as number;
    // Act
    const newer = await call('POST', '/agent/register', undefined, registration(token.token, 'v2-host', '2.0.0'));
    const older = await call('POST', '/agent/register', undefined, registration(token.token, 'v0-host', '0.9.0'));
    // Assess
    expectRefused(newer);
    expectRefused(older, '0.9.0');
    expect(older.json.error.message).toContain('upgrade the agent to 1.x');
    expect(await usesOf(token.id)).toBe(0);
    expect((await call('GET', '/targets?limit=100', admin)).json.meta.total).toBe(before);
    // the token still works for a 1.x agent
    expect(
      (await call('POST', '/agent/register', undefined, registration(token.token, 'v1-host', '1.7.0'))).status,
    ).toBe(201);
  });

  it('refuses an agent_version that is not a semantic version (400), taking no use', async () => {
    const token = await enrollmentToken();
    const reply = await call('POST', '/agent/register', undefined, registration(token.token, 'dev-host', 'dev'));
    expect(reply.status).toBe(400);
    expect(reply.json.error.code).toBe('VALIDATION_ERROR');
    expect(await usesOf(token.id)).toBe(0);
  });
});

describe('every agent call', () => {
  it('refuses an agent claiming 2.0.0 on heartbeat, channel, poll, output and complete; nothing it aimed at changes', async () => {
    // Arrange
    const agent = await enroll('upgraded-too-far');
    const command = await enqueueCommand(await wiring(), {
      targetId: agent.targetId,
      deploymentId: 'deployment-versions',
      stepId: 'step-versions',
      attempt: 1,
      action: { id: 'action-1', slug: 'hello', version: '1.0.0' },
      script: 'echo hi',
      interpreter: 'sh',
      variables: {},
      secretVariables: [],
      timeoutSeconds: 30,
    });
    const before = await target(agent.targetId);
    await new Promise((r) => setTimeout(r, 20));
    // Act
    const replies = [
      await call('POST', '/agent/heartbeat', agent.token, {}, '2.0.0'),
      await call('GET', '/agent/channel', agent.token, undefined, '2.0.0'),
      await call('GET', '/agent/commands?wait=0&max=4', agent.token, undefined, '2.0.0'),
      await call(
        'POST',
        `/agent/commands/${command.id}/output`,
        agent.token,
        { chunks: [{ stream: 'stdout', data: 'x', seq: 0 }] },
        '2.0.0',
      ),
      await call(
        'POST',
        `/agent/commands/${command.id}/complete`,
        agent.token,
        { exit_code: 0, started_at: new Date().toISOString(), completed_at: new Date().toISOString() },
        '2.0.0',
      ),
    ];
    // Assess
    for (const reply of replies) expectRefused(reply);
    const after = await target(agent.targetId);
    expect(after.last_heartbeat_at).toBe(before.last_heartbeat_at);
    // shown as such in the target list: the version it named, and not compatible
    expect(after).toMatchObject({ agent_version: '2.0.0', agent_compatible: false });
    const listed = (await call('GET', '/targets?limit=100', admin)).json.data.find(
      (t: { id: string }) => t.id === agent.targetId,
    );
    expect(listed).toMatchObject({ agent_version: '2.0.0', agent_compatible: false });
    const stored = await (await wiring()).commands.get(command.id);
    expect(stored).toMatchObject({ status: 'queued', outputSeq: -1, result: null });
    // Act: the same host back on a 1.x agent (a downgrade) is taken, gets its command and is shown compatible
    const claimed = await call('GET', '/agent/commands?wait=0&max=4', agent.token, undefined, '1.2.0');
    await call('POST', '/agent/heartbeat', agent.token, {}, '1.2.0');
    // Assess
    expect(claimed.status).toBe(200);
    expect(claimed.json.commands.map((c: { id: string }) => c.id)).toEqual([command.id]);
    expect(await target(agent.targetId)).toMatchObject({
      agent_version: '1.2.0',
      agent_compatible: true,
      status: 'online',
    });
  });

  it('takes a call without the header (an agent from before it, which is 1.0.0), and refuses a malformed one', async () => {
    const agent = await enroll('older-build');
    expect((await call('POST', '/agent/heartbeat', agent.token, {})).status).toBe(200);
    const malformed = await call('POST', '/agent/heartbeat', agent.token, {}, 'latest');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('VALIDATION_ERROR');
    expect(await target(agent.targetId)).toMatchObject({ agent_version: '1.0.0', agent_compatible: true });
  });
});

describe('the WebSocket handshake', () => {
  it('fails (409) for an agent claiming 2.0.0 and stores no connection; a 1.x agent connects and its version is stored', async () => {
    // Arrange
    const agent = await enroll('socket-versions');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const authorization = `Bearer ${agent.token}`;
    // Act
    const refused = await handshake(url, { authorization, [HEADER]: '2.0.0' });
    // Assess
    expect(refused.status).toBe(409);
    expect((await (await wiring()).targets.get(agent.targetId))?.connectionId ?? null).toBeNull();
    // Act
    const opened = await handshake(url, { authorization, [HEADER]: '1.4.0' });
    // Assess
    expect(opened.status).toBe('open');
    expect((await (await wiring()).targets.get(agent.targetId))?.connectionId).toEqual(expect.any(String));
    expect(await target(agent.targetId)).toMatchObject({ agent_version: '1.4.0', agent_compatible: true });
    if (opened.status === 'open') opened.ws.close(1000);
  });
});

describe('the real agent', () => {
  it('built from agent/ is taken: enrolled, online, its version shown as compatible', async () => {
    // Arrange
    const token = await enrollmentToken();
    // Act
    const { agent: running, lines } = await runBundle('real-agent', { enrollToken: token.token });
    if (running === undefined) throw new Error(lines.join('\n'));
    // Assess
    expect(await target(running.targetId)).toMatchObject({
      agent_version: AGENT_VERSION,
      agent_compatible: true,
      status: 'online',
    });
  });

  it('claiming 2.0.0, is refused at enrollment, and, already enrolled, logs the message and exits 1', async () => {
    // Arrange
    const fresh = await enrollmentToken();
    const lines: string[] = [];
    // Act: a new 2.0.0 agent cannot enroll (the token keeps its use)
    const enrolling = await runBundle('v2-fresh', { version: '2.0.0', enrollToken: fresh.token });
    // Assess
    expect(enrolling.exitCode).toBe(1);
    expect(enrolling.lines.join('\n')).toMatch(
      /Enrollment refused by .*Agent 2\.0\.0 is not compatible with this server/,
    );
    expect(await usesOf(fresh.id)).toBe(0);
    // Arrange: an agent enrolled as 1.0.0, restarted as a 2.0.0 build with the same state folder
    const token = await enrollmentToken();
    const { agent: first } = await runBundle('upgraded', { enrollToken: token.token });
    await first!.stop({ graceSeconds: 0 });
    // Act: the same sources built as 2.0.0 (a real 2.0.0 bundle), on the same state folder
    const upgraded = await runBundle('upgraded', { version: '2.0.0', log: (line) => lines.push(line) });
    const code =
      upgraded.agent === undefined
        ? upgraded.exitCode
        : await Promise.race([
            upgraded.agent.exited,
            new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000)),
          ]);
    // Assess
    expect(code).toBe(1);
    expect(lines.join('\n')).toMatch(
      new RegExp(
        `The server refused this agent: Agent 2\\.0\\.0 is not compatible with this server ${pkg.version.replace(/\./g, '\\.')}`,
      ),
    );
    expect(await target(first!.targetId)).toMatchObject({ agent_version: '2.0.0', agent_compatible: false });
  });
});
