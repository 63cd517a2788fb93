// The real agent over the real WebSocket against the local stack, with a TCP proxy between them that can take the
// network away (tests/support/cut-proxy.ts): a deployment's command is pushed and runs; a network outage in the
// middle of a command loses nothing and runs nothing twice; an agent whose proxy refuses WebSocket upgrades falls
// back to polling and still runs commands; after a restart of the whole stack the agents reconnect on their own.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, writeAgentBundle, type LocalAgent } from '../../local/agents.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack, type StackOptions } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { startCutProxy, type CutProxy } from '../support/cut-proxy.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
let stack: Stack;
let options: StackOptions;
let proxy: CutProxy;
let admin: string;
let dir = '';
const agents: LocalAgent[] = [];
const logs = new Map<string, string[]>();
const stackLog: string[] = [];

const api = apiClient(() => stack.baseUrl);
const call = async (method: string, path: string, body?: unknown) => {
  const reply = await api.call(method, `/api/v1${path}`, { token: admin, body });
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${reply.text}`);
  return reply.json;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async <T>(what: string, check: () => Promise<T | undefined> | T | undefined, withinMs = 60_000) => {
  const end = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`${what}: not within ${withinMs / 1000} s`);
    await sleep(100);
  }
};
const logOf = (name: string) => (logs.get(name) ?? []).join('\n');

/** A real agent, through the proxy, enrolled with a fresh single-use token tagged name=<name>. */
const agent = async (name: string, transport?: 'auto' | 'websocket' | 'polling') => {
  const token = (
    await call('POST', '/targets/enrollment-tokens', { expires_in_hours: 1, tags: [{ key: 'name', value: name }] })
  ).token;
  logs.set(name, []);
  // What ships: the one-file agent the stack serves, run by this Node from a folder outside the checkout.
  const running = await spawnAgent({
    bundle: await writeAgentBundle(stack, dir),
    cwd: dir,
    args: [
      '--server',
      proxy.url,
      '--name',
      name,
      '--state-dir',
      join(dir, name),
      ...(transport === undefined ? [] : ['--transport', transport]),
    ],
    enrollToken: token,
    log: (line) => logs.get(name)!.push(line),
  });
  agents.push(running);
  return running;
};

const deployTo = async (name: string, script: string) => {
  const action = await call('POST', '/actions', {
    slug: `${name}-${Math.random().toString(36).slice(2, 8)}`,
    name: 'Channel test',
    version: { version: '1.0.0', script },
  });
  const created = await call('POST', '/deployments', {
    action_id: action.id,
    target_tags: [{ key: 'name', value: name }],
  });
  return created.deployment_id as string;
};

const finished = (id: string, withinMs = 90_000) =>
  until(
    `deployment ${id} finished`,
    async () => {
      const d = await call('GET', `/deployments/${id}`);
      return ['success', 'failed', 'cancelled'].includes(d.state) ? d : undefined;
    },
    withinMs,
  );

const commandOutput = async (deploymentId: string): Promise<string> => {
  const { targetsDeps } = await import('../../functions/shared/targets-wiring.js');
  const commands = await targetsDeps().commands.listByDeployment(deploymentId);
  const parts = await Promise.all(commands.map((c) => targetsDeps().commands.output(c.id)));
  return parts
    .flat()
    .map((c) => c.data)
    .join('');
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'deployer-channel-'));
  const port = await freePort();
  proxy = await startCutProxy({ host: '127.0.0.1', port });
  options = {
    port,
    // The same emulator ports after a restart: this process's handlers keep their clients (infra() is made once).
    dynamoPort: await freePort(),
    sqsPort: await freePort(),
    websocketPort: await freePort(),
    dataDir: join(dir, 'data'),
    secretsDir: join(dir, 'secrets'), // the same keyring after the restart
    log: (line) => stackLog.push(line),
    namePrefix: `${uniqueName('channel')}-`,
    bootstrapAdmin: ADMIN,
    // Agents reach the socket through the proxy too, so an outage takes both their HTTP and their socket away.
    // Idle pings every 5 s (the service's 25 s, shortened so that a test sees several).
    env: { AGENT_SOCKET_URL: `ws://127.0.0.1:${proxy.port}/api/v1/agent/socket`, AGENT_IDLE_PING_SECONDS: '5' },
  };
  stack = await startStack(options);
  admin = (await api.login(ADMIN)).token;
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await stack?.stop();
  await proxy?.close();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('the agent over its WebSocket', () => {
  it('connects, and runs a deployment’s command the moment it is pushed', async () => {
    // Arrange
    const web = await agent('push-web');
    await until('connected', () => (/connected over WebSocket/.test(logOf('push-web')) ? true : undefined));
    const target = await call('GET', `/targets/${web.targetId}`);
    // Act
    const id = await deployTo('push-web', 'echo pushed');
    const done = await finished(id);
    // Assess
    expect(target.status).toBe('online');
    expect(done.state).toBe('success');
    expect(await commandOutput(id)).toBe('pushed\n');
  });

  it('keeps an idle connected agent online by its pings: its last heartbeat is never a minute old', async () => {
    // Arrange
    const idle = await agent('idle-pings');
    await until('connected', () => (/connected over WebSocket/.test(logOf('idle-pings')) ? true : undefined));
    const first = await call('GET', `/targets/${idle.targetId}`);
    // Act: idle for more than two pings
    await sleep(12_000);
    const later = await call('GET', `/targets/${idle.targetId}`);
    // Assess
    expect([first.status, later.status]).toEqual(['online', 'online']);
    expect(Date.parse(later.last_heartbeat_at)).toBeGreaterThan(Date.parse(first.last_heartbeat_at));
    expect(Date.now() - Date.parse(later.last_heartbeat_at)).toBeLessThan(10_000);
  });

  it(
    'shows an agent stopped cleanly offline at once, and fails work sent to it saying so',
    { timeout: 90_000 },
    async () => {
      // Arrange
      const leaving = await agent('leaving');
      await until('connected', () => (/connected over WebSocket/.test(logOf('leaving')) ? true : undefined));
      expect((await call('GET', `/targets/${leaving.targetId}`)).status).toBe('online');
      // Act
      await leaving.stop({ graceSeconds: 1 });
      const after = await call('GET', `/targets/${leaving.targetId}`);
      const id = await deployTo('leaving', 'echo never');
      const done = await finished(id, 60_000);
      // Assess
      expect(after.status).toBe('offline');
      expect(done.state).toBe('failed');
      expect(JSON.stringify(done.plan.steps)).toMatch(/its agent was stopped at .* \(it said goodbye\)/);
    },
  );

  it(
    'loses nothing in a network outage mid-command: output and completion arrive after it, the command ran once',
    { timeout: 120_000 },
    async () => {
      // Arrange
      await agent('outage-web');
      await until('connected', () => (/connected over WebSocket/.test(logOf('outage-web')) ? true : undefined));
      const id = await deployTo('outage-web', 'echo before; sleep 4; echo after');
      await until('the first line arrived', async () =>
        (await commandOutput(id)).includes('before') ? true : undefined,
      );
      // Act
      proxy.cut(2_500);
      const done = await finished(id);
      // Assess
      expect(done.state).toBe('success');
      expect(await commandOutput(id)).toBe('before\nafter\n');
      expect(logOf('outage-web').match(/running \S+/g)).toHaveLength(1);
      expect(logOf('outage-web')).toMatch(/WebSocket closed/);
      await until('reconnected', () =>
        logOf('outage-web').match(/connected over WebSocket/g)?.length === 2 ? true : undefined,
      );
    },
  );

  it(
    'falls back to polling when a proxy refuses the WebSocket upgrade, says so, and still runs commands',
    { timeout: 120_000 },
    async () => {
      // Arrange
      proxy.refuseUpgrades(true);
      const upgradesBefore = proxy.upgrades();
      try {
        await agent('fallback-web');
        await until(
          'fell back',
          () => (/falling back to HTTP long polling/.test(logOf('fallback-web')) ? true : undefined),
          90_000,
        ).catch((error: unknown) => {
          throw new Error(`${(error as Error).message}\n${logOf('fallback-web')}`);
        });
        // Act
        const id = await deployTo('fallback-web', 'echo polled');
        const done = await finished(id);
        // Assess
        expect(done.state, `${JSON.stringify(done.plan?.steps)}\n${logOf('fallback-web')}`).toBe('success');
        expect(await commandOutput(id)).toBe('polled\n');
        expect(proxy.upgrades() - upgradesBefore).toBeGreaterThanOrEqual(3); // three refused opens before the fallback
        expect(logOf('fallback-web')).not.toMatch(/connected over WebSocket/);
      } finally {
        proxy.refuseUpgrades(false);
      }
    },
  );

  it(
    'pushes a command whose push was lost again, hands it back to the same installation only, which runs it once',
    { timeout: 120_000 },
    async () => {
      // Arrange: the agent enrolls and stops; a bare socket with its token and installation id takes its place
      const name = 'lost-push';
      const first = await agent(name);
      await until('connected', () => (/connected over WebSocket/.test(logOf(name)) ? true : undefined));
      await first.stop({ graceSeconds: 1 });
      const state = JSON.parse(await readFile(join(dir, name, 'state.json'), 'utf8')) as { agent_token: string };
      const instance = (await readFile(join(dir, name, 'instance'), 'utf8')).trim();
      const url = `ws://127.0.0.1:${proxy.port}/api/v1/agent/socket`;
      const bare = new WebSocket(url, {
        headers: { authorization: `Bearer ${state.agent_token}`, 'x-deployer-agent-instance': instance },
      } as unknown as string[]);
      const pushed: { type?: string; command?: { id: string; script: string } }[] = [];
      bare.addEventListener('message', (event) => pushed.push(JSON.parse(String(event.data))));
      await new Promise((resolve, reject) => {
        bare.addEventListener('open', resolve);
        bare.addEventListener('error', reject);
      });
      await until('the bare socket is the target’s connection', async () => {
        const { targetsDeps } = await import('../../functions/shared/targets-wiring.js');
        return (await targetsDeps().targets.get(first.targetId))?.connectionInstance === instance ? true : undefined;
      });
      // Act: the command is pushed to the bare socket, which drops it (a lost push) and closes
      const id = await deployTo(name, 'echo once');
      const message = await until('pushed', () => pushed.find((m) => m.type === 'command'));
      // Not acknowledged: the engine's periodic check (every 10 s) pushes it again, 5 s after the push
      await until(
        'pushed again',
        () => (pushed.filter((m) => m.type === 'command').length >= 2 ? true : undefined),
        45_000,
      );
      const claimAs = (installation: string | undefined) =>
        fetch(`${stack.baseUrl}/api/v1/agent/commands?wait=0`, {
          headers: {
            authorization: `Bearer ${state.agent_token}`,
            ...(installation === undefined ? {} : { 'x-deployer-agent-instance': installation }),
          },
        }).then(async (r) => (await r.json()) as { commands: unknown[] });
      const byAnother = await claimAs('another-installation-0000');
      const byOldAgent = await claimAs(undefined);
      bare.close();
      const again = await agent(name); // the same state folder: the same installation
      const done = await finished(id);
      // Assess
      expect(message.command?.script).toBe('echo once');
      expect(new Set(pushed.filter((m) => m.type === 'command').map((m) => m.command?.id)).size).toBe(1);
      expect(byAnother.commands).toEqual([]);
      expect(byOldAgent.commands).toEqual([]);
      expect(again.targetId).toBe(first.targetId);
      expect(done.state).toBe('success');
      expect(await commandOutput(id)).toBe('once\n');
      expect(logOf(name).match(/running \S+/g)).toHaveLength(1);
    },
  );

  it('reconnects after the whole stack restarted, and runs the next command', { timeout: 180_000 }, async () => {
    // Arrange
    const { targetsDeps } = await import('../../functions/shared/targets-wiring.js');
    const web = agents[0]!;
    const before = (await targetsDeps().targets.get(web.targetId))?.connectionId;
    await stack.stop();
    // Act
    stack = await startStack(options);
    admin = (await api.login(ADMIN)).token;
    await until(
      'reconnected',
      async () => {
        const target = await targetsDeps().targets.get(web.targetId);
        return typeof target?.connectionId === 'string' && target.connectionId !== before ? target : undefined;
      },
      60_000,
    ).catch((error: unknown) => {
      const socketLines = stackLog.filter((l) => /agent|socket|connect|ERROR/i.test(l)).slice(-30);
      throw new Error(`${(error as Error).message}\n${logOf('push-web')}\n${socketLines.join('\n')}`);
    });
    const id = await deployTo('push-web', 'echo again');
    const done = await finished(id);
    // Assess
    expect(done.state, JSON.stringify(done.plan?.steps)).toBe('success');
    expect(await commandOutput(id)).toBe('again\n');
  });
});
