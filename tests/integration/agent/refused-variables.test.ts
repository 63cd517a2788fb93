// The agent checks a command's variable names again before it spawns anything (issue 10, rule 3): a command from
// an old server or a tampered record that carries a loader, shell or interpreter variable is completed with exit
// code 126 and a clear error, and its script never runs.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentCommand } from '../../../protocol/messages.js';
import { startFakeAgentServer, type FakeAgentServer } from '../../support/fake-agent-server.js';
import { removeDir, startTestAgent, tempDir, until, type TestAgent } from './helpers.js';

let server: FakeAgentServer;
let dir: string;
let running: TestAgent | undefined;

beforeEach(async () => {
  server = await startFakeAgentServer();
  dir = await tempDir('agent-refused-');
});
afterEach(async () => {
  await running?.agent.stop({ graceSeconds: 0 });
  running = undefined;
  await server.close();
  await removeDir(dir);
});

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

const completed = async (id: string) => {
  await until(`${id} to complete`, () => server.backend.command(id).completion !== undefined);
  return server.backend.command(id);
};

describe('a command whose variables the agent refuses', () => {
  it.each([
    ['NODE_OPTIONS', '--import=data:text/javascript,0'],
    ['LD_PRELOAD', '/tmp/evil.so'],
    ['ld_preload', '/tmp/evil.so'],
    ['SHELLOPTS', 'xtrace'],
    ['BASH_ENV', '/tmp/evil.sh'],
    ['PYTHONWARNINGS', 'all'],
    ['DEPLOYER_DEPLOYMENT_ID', 'forged'],
    ['__proto__', 'x'],
  ])('is not run when it carries %s: exit 126 and the error names the variable', async (name, value) => {
    // Prepare
    running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state') });
    const marker = join(dir, `ran-${name}`);
    const variables = Object.fromEntries([
      ['PORT', '80'],
      [name, value],
    ]) as Record<string, string>;
    // Act
    const command = server.backend.enqueue(server.backend.target.id, {
      script: `touch '${marker}'; echo ran`,
      variables,
    } satisfies Partial<AgentCommand>);
    const state = await completed(command.id);
    // Assess
    expect(state.completion).toMatchObject({
      exit_code: 126,
      error_message: `Refused to run: variable ${name} is not allowed in a command's environment`,
    });
    expect(await exists(marker)).toBe(false);
    expect(server.backend.output(command.id, 'stdout')).toBe('');
    expect(running.lines.join('\n')).toContain(`refused ${command.id}: variable '${name}'`);
  });

  it('runs a command with ordinary names, NODE_ENV and valueOf included', async () => {
    // Prepare
    running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state') });
    // Act
    const command = server.backend.enqueue(server.backend.target.id, {
      script: 'echo "$NODE_ENV $PORT"',
      variables: { NODE_ENV: 'production', PORT: '80', valueOf: 'v' },
    });
    const state = await completed(command.id);
    // Assess
    expect(state.completion).toMatchObject({ exit_code: 0 });
    expect(server.backend.output(command.id, 'stdout')).toBe('production 80\n');
  });
});
