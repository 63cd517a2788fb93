// The agent as a process, the way `npm run agent` starts it: help, bad options, and a clean stop on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAgentServer, type FakeAgentServer } from '../../support/fake-agent-server.js';
import { removeDir, tempDir, until } from './helpers.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

interface Run {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exit: Promise<number | null>;
}

const agentProcess = (args: string[], env: NodeJS.ProcessEnv = {}): Run => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'agent/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
};

let server: FakeAgentServer;
let dir: string;
let run: Run | undefined;

beforeEach(async () => {
  server = await startFakeAgentServer();
  dir = await tempDir('agent-cli-');
});
afterEach(async () => {
  if (run !== undefined && run.child.exitCode === null) {
    run.child.kill('SIGKILL');
    await run.exit;
  }
  run = undefined;
  await server.close();
  await removeDir(dir);
});

describe('npm run agent', () => {
  it('prints its usage with --help, and refuses unknown options with exit code 2', async () => {
    // Act
    const help = agentProcess(['--help']);
    const bad = agentProcess(['--server', 'http://x', '--bogus']);
    // Assess
    expect(await help.exit).toBe(0);
    expect(help.stdout()).toContain('Usage: node deployer-agent.mjs --server URL [--enroll TOKEN] [options]');
    expect(await bad.exit).toBe(2);
    expect(bad.stderr()).toContain("error: Unknown option '--bogus'");
  });

  it('--enroll-only enrolls, prints the answer and exits 0; again it keeps the identity; refused: exit 1 with the reason', async () => {
    // Prepare
    const args = ['--server', server.url, '--name', 'once', '--state-dir', join(dir, 'state'), '--enroll-only'];
    const token = { DEPLOYER_AGENT_ENROLL_TOKEN: 'det_test-enrollment' };
    // Act
    const first = agentProcess(args, token);
    const firstCode = await first.exit;
    const again = agentProcess(args, token);
    const againCode = await again.exit;
    const refused = agentProcess([...args.slice(0, -2), join(dir, 'other'), '--enroll-only'], {
      DEPLOYER_AGENT_ENROLL_TOKEN: 'det_wrong',
    });
    const refusedCode = await refused.exit;
    // Assess
    const target = server.backend.target;
    expect([firstCode, againCode, refusedCode]).toEqual([0, 0, 1]);
    expect(first.stdout()).toContain(`enrolled with ${server.url} as target ${target.id} (fake1), tags env=test`);
    expect(again.stdout()).toContain(
      `already enrolled with ${server.url} as target ${target.id} (state in ${join(dir, 'state')}); keeping this identity, the enrollment token was not used`,
    );
    expect(refused.stderr()).toMatch(/Enrollment refused by .* the enrollment token is unknown or expired/);
    expect(server.backend.registerCalls).toBe(2); // the first and the refused one
    expect(server.backend.channelCalls + server.backend.heartbeats.length).toBe(0); // it never started to serve
  });

  it('stops on SIGTERM: polling ends, a running command is killed after the grace period and reported, exit 0', async () => {
    // Prepare
    run = agentProcess(
      [
        '--server',
        server.url,
        '--name',
        'cli-agent',
        '--tag',
        'env=test',
        '--state-dir',
        join(dir, 'state'),
        '--poll-wait-seconds',
        '1',
        '--heartbeat-seconds',
        '1',
        '--kill-grace-seconds',
        '1',
        '--shutdown-grace-seconds',
        '1',
      ],
      { DEPLOYER_AGENT_ENROLL_TOKEN: 'det_test-enrollment' },
    );
    await until('the agent to start', () => run!.stdout().includes('[cli-agent] started: target'), 20_000);
    const command = server.backend.enqueue(server.backend.target.id, {
      script: 'echo "token=${DEPLOYER_AGENT_ENROLL_TOKEN:-none}"; sleep 30',
    });
    await until('the command output', () => server.backend.output(command.id) !== '');
    // Act
    run.child.kill('SIGTERM');
    const code = await run.exit;
    // Assess
    expect(code).toBe(0);
    expect(server.backend.output(command.id)).toBe('token=none\n');
    expect(server.backend.command(command.id).completion).toMatchObject({
      exit_code: 130,
      error_message: 'Cancelled: the agent shut down before the command finished',
    });
    expect(server.backend.target.registration.tags).toEqual([{ key: 'env', value: 'test' }]);
    const out = run.stdout();
    expect(out).toContain('[cli-agent] received SIGTERM; stopping');
    expect(out).toMatch(/\[cli-agent\] stopped\n$/);
    expect(out).not.toContain('det_test-enrollment');
    expect(out).not.toContain(server.backend.target.token);
  });

  it('after a SIGKILL, the next run ends the processes the lost command left running, then reports it lost', async () => {
    // Prepare: a command whose script would write a file in 4 s, unless its processes are ended
    const args = [
      '--server',
      server.url,
      '--name',
      'killed-agent',
      '--state-dir',
      join(dir, 'state'),
      '--poll-wait-seconds',
      '1',
    ];
    run = agentProcess(args, { DEPLOYER_AGENT_ENROLL_TOKEN: 'det_test-enrollment' });
    await until('the agent to start', () => run!.stdout().includes('[killed-agent] started: target'), 20_000);
    const finished = join(dir, 'finished');
    const command = server.backend.enqueue(server.backend.target.id, {
      script: `echo up; sleep 4; echo done > ${finished}`,
    });
    await until('the command output', () => server.backend.output(command.id) !== '');
    // Output leaves the agent only once the command's process group is on record (else a kill now would lose it)
    const onRecord = JSON.parse(await readFile(join(dir, 'state', 'commands', `${command.id}.json`), 'utf8'));
    expect(onRecord).toMatchObject({ status: 'started', pid: expect.any(Number) });
    // Act: the agent dies at once (its command's process group runs on); a new run starts on the same state
    run.child.kill('SIGKILL');
    await run.exit;
    run = agentProcess(args);
    await until(
      'the lost command to be reported',
      () => server.backend.command(command.id).completion !== undefined,
      20_000,
    );
    // Assess: the processes were ended before the report, and the script never got to write its file
    expect(run.stdout()).toContain(`ended the processes ${command.id} left running`);
    expect(server.backend.command(command.id).completion).toMatchObject({
      exit_code: -1,
      error_message: 'The agent restarted while the command was running',
    });
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await expect(access(finished)).rejects.toThrow();
  }, 60_000);
});
