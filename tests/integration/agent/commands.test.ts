// Commands end to end through the agent and a protocol-faithful fake server: environment, masking, ordered
// output, timeouts, cancels, concurrency, redelivery, and stopping.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentCommand } from '../../../protocol/messages.js';
import { CommandStore } from '../../../agent/state.js';
import { startFakeAgentServer, type FakeAgentServer } from '../../support/fake-agent-server.js';
import { alive, pidFrom, removeDir, startTestAgent, tempDir, until, type TestAgent } from './helpers.js';

let server: FakeAgentServer;
let dir: string;
let running: TestAgent | undefined;

beforeEach(async () => {
  server = await startFakeAgentServer();
  dir = await tempDir('agent-commands-');
});
afterEach(async () => {
  await running?.agent.stop({ graceSeconds: 0 });
  running = undefined;
  await server.close();
  await removeDir(dir);
});

const start = async (options: Partial<Parameters<typeof startTestAgent>[0]> = {}) => {
  running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state'), ...options });
  return running;
};

const enqueue = (overrides: Partial<AgentCommand>) => server.backend.enqueue(server.backend.target.id, overrides);

const completed = async (id: string, timeoutMs = 15_000) => {
  await until(`${id} to complete`, () => server.backend.command(id).completion !== undefined, timeoutMs);
  return server.backend.command(id);
};

describe('running commands', () => {
  it('runs a command in its own directory with its variables, masks secrets, and completes after all output', async () => {
    // Prepare
    const { lines } = await start();
    const script = [
      'echo "greeting=$GREETING dir=$(basename "$PWD")"',
      'echo "ids=$DEPLOYER_DEPLOYMENT_ID/$DEPLOYER_STEP_ID/$DEPLOYER_COMMAND_ID action=$DEPLOYER_ACTION_SLUG@$DEPLOYER_ACTION_VERSION"',
      'echo "password=$DB_PASSWORD"',
      'printf "split: %s" "${DB_PASSWORD%?????}"; sleep 0.4; printf "%s end\\n" "${DB_PASSWORD#????????}"',
      'echo "token on stderr: $API_TOKEN" >&2',
    ].join('\n');
    // Act
    const command = enqueue({
      script,
      variables: { GREETING: 'hello world', DB_PASSWORD: 'correct-horse', API_TOKEN: 'tok_123456' },
      secret_variables: ['DB_PASSWORD', 'API_TOKEN'],
    });
    const state = await completed(command.id);
    // Assess
    expect(state.completion).toMatchObject({ exit_code: 0 });
    expect(state.completion!.error_message).toBeUndefined();
    expect(Date.parse(state.completion!.completed_at)).toBeGreaterThanOrEqual(Date.parse(state.completion!.started_at));
    expect(server.backend.output(command.id, 'stdout')).toBe(
      `greeting=hello world dir=${command.id}\nids=dep-1/step-1/${command.id} action=hello@1.2.0\npassword=***\nsplit: *** end\n`,
    );
    expect(server.backend.output(command.id, 'stderr')).toBe('token on stderr: ***\n');
    const everything = JSON.stringify(server.backend.command(command.id).received);
    expect(everything).not.toContain('correct-horse');
    expect(everything).not.toMatch(/correct-|horse/);
    expect(everything).not.toContain('tok_123456');
    expect(state.chunksAtCompletion).toBe(state.chunks.length);
    expect(state.violations).toEqual([]);
    expect(await readFile(join(dir, 'state', 'work', command.id, 'script.sh'), 'utf8')).toBe(script);
    const log = lines.join('\n');
    expect(log).toMatch(
      new RegExp(`Z \\[test-agent\\] running ${command.id} \\(deploy dep-1, action hello@1\\.2\\.0, sh, no timeout\\)`),
    );
    expect(log).toMatch(new RegExp(`finished ${command.id}: exit 0 in \\d+\\.\\ds`));
    expect(log).not.toContain('correct-horse');
    const store = new CommandStore(join(dir, 'state'));
    await until('the record to say reported', async () => (await store.get(command.id))?.status === 'reported');
    expect(await store.get(command.id)).toMatchObject({ result: { exit_code: 0 } });
  });

  it('sends stdout and stderr in the order they were written, numbered from 0 without gaps', async () => {
    // Prepare
    await start();
    const steps = ['out 1', 'err 1', 'out 2', 'out 3', 'err 2', 'out 4'];
    const script = steps.map((s) => `echo "${s}"${s.startsWith('err') ? ' >&2' : ''}; sleep 0.1`).join('\n');
    // Act
    const command = enqueue({ script });
    const state = await completed(command.id);
    // Assess
    expect(state.chunks.map((c) => c.seq)).toEqual(state.chunks.map((_, i) => i));
    const lines = state.chunks.flatMap((c) =>
      c.data
        .trimEnd()
        .split('\n')
        .map((line) => `${c.stream}:${line}`),
    );
    expect(lines).toEqual(steps.map((s) => `${s.startsWith('err') ? 'stderr' : 'stdout'}:${s}`));
    expect(state.violations).toEqual([]);
  });

  it('reports a non-zero exit code and a missing interpreter (127)', async () => {
    // Prepare
    await start({ env: { PATH: join(dir, 'nothing-here') } });
    // Act
    const command = enqueue({ script: 'exit 0', interpreter: 'python3' });
    const state = await completed(command.id);
    // Assess
    expect(state.completion).toMatchObject({
      exit_code: 127,
      error_message: "The interpreter 'python3' was not found on this host",
    });
  });

  it('kills a command that runs past its timeout, with its children, and reports 124', async () => {
    // Prepare
    await start();
    const pidFile = join(dir, 'sleep.pid');
    // Act
    const command = enqueue({ script: `sleep 30 & echo $! > ${pidFile}; wait`, timeout_seconds: 1 });
    const child = await pidFrom(pidFile);
    const began = Date.now();
    const state = await completed(command.id, 10_000);
    // Assess
    expect(Date.now() - began).toBeLessThan(8000);
    expect(state.completion).toMatchObject({
      exit_code: 124,
      error_message: 'Timed out after 1 s; the process group was killed',
    });
    await until('the sleep to be gone', () => !alive(child), 3000);
  });

  it("stops a command listed in a poll's cancel, and reports 130", async () => {
    // Prepare
    await start();
    const pidFile = join(dir, 'sleep.pid');
    const command = enqueue({ script: `sleep 30 & echo $! > ${pidFile}; wait` });
    const child = await pidFrom(pidFile);
    // Act
    server.backend.cancel(command.id);
    const state = await completed(command.id, 10_000);
    // Assess
    expect(state.completion).toMatchObject({ exit_code: 130, error_message: 'Cancelled by the server' });
    await until('the sleep to be gone', () => !alive(child), 3000);
  });

  it('stops a command when an output answer says cancel_requested', async () => {
    // Prepare
    await start();
    const command = enqueue({ script: 'while true; do echo tick; sleep 0.1; done' });
    await until('some output', () => server.backend.command(command.id).chunks.length > 0);
    // Act
    server.backend.cancel(command.id, { viaPoll: false });
    const state = await completed(command.id, 10_000);
    // Assess
    expect(state.completion).toMatchObject({ exit_code: 130, error_message: 'Cancelled by the server' });
    expect(state.violations).toEqual([]);
  });

  it.each(['polling', 'websocket'] as const)(
    'runs no more commands at once than its concurrency, and takes new work as slots free up (%s)',
    async (transport) => {
      // Prepare
      await start({ concurrency: 2, transport });
      const counts = join(dir, 'counts');
      const script = `mkdir -p ${dir}/running; touch ${dir}/running/$DEPLOYER_COMMAND_ID; ls ${dir}/running | wc -l >> ${counts}; sleep 0.6; rm ${dir}/running/$DEPLOYER_COMMAND_ID`;
      // Act
      const commands = Array.from({ length: 5 }, () => enqueue({ script }));
      for (const c of commands) await completed(c.id);
      // Assess
      const seen = (await readFile(counts, 'utf8')).trim().split('\n').map(Number);
      expect(seen).toHaveLength(5);
      expect(Math.max(...seen)).toBe(2);
      const polls = server.backend.polls;
      expect(polls.every((p) => p.max >= 0 && p.max <= 2)).toBe(true);
      // Polling asks with max=0 while full (for cancels); over the socket a freed slot drains what did not fit.
      if (transport === 'polling') expect(polls.some((p) => p.max === 0)).toBe(true);
      else expect(polls.every((p) => p.wait === 0)).toBe(true);
      expect(commands.every((c) => server.backend.command(c.id).completion?.exit_code === 0)).toBe(true);
    },
  );

  it('never runs a command twice: one delivered again is not run, its completion is sent again', async () => {
    // Prepare
    await start();
    const ran = join(dir, 'ran');
    const command = enqueue({ script: `echo once >> ${ran}` });
    await completed(command.id);
    // Act
    server.backend.redeliver(command.id);
    await until('the completion to be sent again', () => server.backend.command(command.id).completeCalls === 2);
    // Assess
    expect(await readFile(ran, 'utf8')).toBe('once\n');
    expect(server.backend.command(command.id).deliveries).toBe(2);
    expect(await readdir(join(dir, 'state', 'work'))).toEqual([command.id]);
  });

  it('never runs a command twice: one delivered again while its completion is still being sent is not run, its completion is sent again', async () => {
    // Prepare: the first completion is refused (503, Retry-After 1 s) so the agent still handles the command
    const { lines } = await start();
    const ran = join(dir, 'ran');
    server.backend.failNext(1, 503, { path: /\/complete$/, retryAfter: '1' });
    const command = enqueue({ script: `echo once >> ${ran}` });
    await until('the refused completion', () => lines.some((l) => l.includes(`finished ${command.id}`)));
    // Act: delivered again before the completion got through
    server.backend.redeliver(command.id);
    await until(
      'the completion to be sent again',
      () => server.backend.command(command.id).completeCalls === 2,
      15_000,
    );
    // Assess
    expect(await readFile(ran, 'utf8')).toBe('once\n');
    expect(server.backend.command(command.id).deliveries).toBe(2);
  });

  it('drops a command the server no longer knows, stopping it', async () => {
    // Prepare
    const { lines } = await start();
    const command = enqueue({ script: 'while true; do echo tick; sleep 0.1; done' });
    await until('some output', () => server.backend.command(command.id).chunks.length > 0);
    const calls = () => server.backend.outputRequests.filter((r) => r.id === command.id).length;
    // Act
    server.backend.forget(command.id);
    await until('the drop', () => lines.some((l) => l.includes(`dropped ${command.id}`)), 10_000);
    const after = calls();
    await new Promise((r) => setTimeout(r, 500));
    // Assess
    expect(calls()).toBe(after);
    expect(lines.join('\n')).toMatch(
      new RegExp(`finished ${command.id}: exit 130 .*\\(The server no longer knows this command\\)`),
    );
  });
});

describe('stopping the agent', () => {
  it('lets running commands finish within the grace period', async () => {
    // Prepare
    const { agent, lines } = await start();
    const command = enqueue({ script: 'sleep 1; echo finished' });
    await until('the command to start', () => lines.some((l) => l.includes(`running ${command.id}`)));
    // Act
    await agent.stop({ graceSeconds: 10 });
    // Assess
    const state = server.backend.command(command.id);
    expect(state.completion).toMatchObject({ exit_code: 0 });
    expect(server.backend.output(command.id)).toBe('finished\n');
    expect(await agent.exited).toBe(0);
    expect(lines.at(-1)).toMatch(/\[test-agent\] stopped$/);
  });

  it('kills commands still running after the grace period and reports them cancelled', async () => {
    // Prepare
    const { agent, lines } = await start();
    const pidFile = join(dir, 'sleep.pid');
    const command = enqueue({ script: `echo started; sleep 30 & echo $! > ${pidFile}; wait` });
    const child = await pidFrom(pidFile);
    const pollsBefore = server.backend.polls.length;
    // Act
    const began = Date.now();
    await agent.stop({ graceSeconds: 1 });
    // Assess
    expect(Date.now() - began).toBeLessThan(8000);
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    expect(server.backend.command(command.id).completion).toMatchObject({
      exit_code: 130,
      error_message: 'Cancelled: the agent shut down before the command finished',
    });
    expect(server.backend.output(command.id)).toBe('started\n');
    expect(alive(child)).toBe(false);
    expect(server.backend.polls.length).toBeLessThanOrEqual(pollsBefore + 1);
    expect(lines.join('\n')).toContain('stopping: waiting up to 1 s for 1 running command(s) to finish');
  });
});
