// Keeping agents current (issue 31): a stack that ships agent 1.0.1 (built from these sources as another version)
// while the agents run the 1.0.0 bundle, each from a temporary folder outside the checkout with only the bundle and
// this Node. The server names its release (GET /agent/channel, /server/info) and marks older agents outdated; an agent
// started with --auto-update downloads the release, checks its SHA-256 against the channel's answer, replaces its own
// file and restarts as 1.0.1 with the same target, never while a command runs; a download that does not match the
// checksum (tampered on the way) is not installed and the agent keeps running 1.0.0, saying why.
import { createHash } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueCommand } from '../../domain/targets/commands.js';
import { localEnrollmentToken, spawnAgent, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { buildProgram } from '../../programs/build.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' } as const;
const SHIPPED = '1.0.1';
const RUNNING = '1.0.0';

let stack: Stack;
let admin = '';
let dir = '';
/** The 1.0.0 bundle the agents start from. */
let oldBundle: Uint8Array;
const proxies: Server[] = [];
/** Processes to end afterwards (an agent that restarted itself is a new process). */
const pids = new Set<number>();
const agents: LocalAgent[] = [];

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, token?: string) =>
  api.call(method, `/api/v1${path}`, token === undefined ? {} : { token });
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const RELEASE_PATH = /^\/agent\/v[^/]+\/[0-9a-f]{16}\/deployer-agent\.mjs$/;

/**
 * An HTTP proxy to the stack (the agent's --server): the release's download waits for `gate` when given, and its
 * bytes are altered on the way when `tamper` (a man in the middle of the download, not of the channel's answer).
 */
const startProxy = async (options: { gate?: Promise<void>; tamper?: boolean }): Promise<string> => {
  const upstream = new URL(stack.baseUrl);
  const server = createServer((req, res) => {
    void (async () => {
      const download = RELEASE_PATH.test(req.url ?? '');
      if (download) await options.gate;
      const forward = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          if (!(download && options.tamper === true)) {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            return;
          }
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            const body = Buffer.concat(chunks);
            body[body.length - 2] = body[body.length - 2]! ^ 0x20; // same size, other bytes
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(body);
          });
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxies.push(server);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return `http://127.0.0.1:${address.port}`;
};

interface Started {
  readonly agent: LocalAgent;
  readonly folder: string;
  readonly bundle: string;
  /** Every line it wrote, with when it arrived. */
  readonly lines: { readonly at: number; readonly text: string }[];
}

/**
 * The 1.0.0 bundle in a folder of its own outside the checkout (cwd there), started by this Node with --auto-update
 * against `server`, polling (the proxies pass plain HTTP only).
 */
const startOldAgent = async (name: string, server: string): Promise<Started> => {
  const folder = await mkdtemp(join(dir, `${name}-`));
  const bundle = join(folder, 'deployer-agent.mjs');
  await writeFile(bundle, oldBundle, { mode: 0o755 });
  const lines: Started['lines'] = [];
  const agent = await spawnAgent({
    bundle,
    cwd: folder,
    args: [
      '--server',
      server,
      '--name',
      name,
      '--state-dir',
      join(folder, 'state'),
      '--transport',
      'polling',
      '--poll-wait-seconds',
      '2',
      '--auto-update',
    ],
    enrollToken: await localEnrollmentToken(stack),
    log: (text) => {
      lines.push({ at: Date.now(), text });
      const pid = /runs as process (\d+)/.exec(text)?.[1];
      if (pid !== undefined) pids.add(Number(pid));
    },
  }).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${lines.map((l) => l.text).join('\n')}`);
  });
  agents.push(agent);
  if (agent.pid !== undefined) pids.add(agent.pid);
  return { agent, folder, bundle, lines };
};

const agentToken = async (started: Started): Promise<string> =>
  (JSON.parse(await readFile(join(started.folder, 'state', 'state.json'), 'utf8')) as { agent_token: string })
    .agent_token;

const targetOf = async (id: string) => (await call('GET', `/targets/${id}`, admin)).json;

const wiring = async () => (await import('../../functions/shared/targets-wiring.js')).targetsDeps();

const logOf = (started: Started) => started.lines.map((l) => l.text).join('\n');

beforeAll(async () => {
  stack = await startStack({
    port: 0,
    namePrefix: `${uniqueName('agent-update')}-`,
    bootstrapAdmin: ADMIN,
    programVersions: { agent: SHIPPED },
  });
  admin = (await api.login(ADMIN)).token;
  dir = await mkdtemp(join(tmpdir(), 'deployer-agent-update-'));
  const old = await buildProgram('agent');
  oldBundle = old.files.get(old.release.path)!.contents;
  expect(old.release.version).toBe(RUNNING);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 0 })));
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  for (const proxy of proxies) proxy.close();
  await stack?.stop();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('an agent started with --auto-update', () => {
  it('installs the shipped release only once its running command ended, and comes back as it with the same target', async () => {
    // Prepare: the download waits until a command runs on the agent
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const started = await startOldAgent('updating', await startProxy({ gate }));
    const targetId = started.agent.targetId;
    const before = await targetOf(targetId);
    const channel = await call('GET', '/agent/channel', await agentToken(started));
    const info = await call('GET', '/server/info');
    const release = stack.programs.agent!;
    const command = await enqueueCommand(await wiring(), {
      targetId,
      deploymentId: 'deployment-update',
      stepId: 'step-sleep',
      attempt: 1,
      action: { id: 'action-1', slug: 'sleep', version: '1.0.0' },
      script: 'echo started; sleep 3; echo done',
      interpreter: 'sh',
      variables: {},
      secretVariables: [],
      timeoutSeconds: 60,
    });
    const deps = await wiring();
    await expect
      .poll(async () => (await deps.commands.output(command.id)).map((c) => c.data).join(''), { timeout: 20_000 })
      .toContain('started');
    // Act: the release can be downloaded now, while the command sleeps
    open();
    let exitedAt = 0;
    void started.agent.exited.then(() => (exitedAt = Date.now()));
    await expect
      .poll(async () => (await targetOf(targetId)).agent_version, { timeout: 40_000, interval: 500 })
      .toBe(SHIPPED);
    // Assess: what the server said before
    expect(before).toMatchObject({ agent_version: RUNNING, agent_outdated: true });
    expect(channel.json).toMatchObject({
      release: { version: SHIPPED, sha256: release.sha256, size: release.size, url: release.path },
      accepted: '>=1.0.0 <2.0.0',
    });
    expect(info.json.agent_version).toBe(SHIPPED);
    // the command ran to its end (not cancelled by the update), and the old process exited only after it
    const done = await deps.commands.get(command.id);
    expect(done?.status).toBe('completed');
    expect(done?.result?.exitCode).toBe(0);
    const installedAt = started.lines.find((l) => l.text.includes(`installed agent ${SHIPPED}`))?.at;
    expect(installedAt, logOf(started)).toBeDefined();
    expect(installedAt!).toBeLessThan(Date.parse(done!.result!.completedAt));
    expect(exitedAt).toBeGreaterThanOrEqual(Date.parse(done!.result!.completedAt));
    // the same target, now current; its file is the release's bytes, mode kept
    const after = await targetOf(targetId);
    expect(after).toMatchObject({ id: targetId, agent_version: SHIPPED, agent_outdated: false, status: 'online' });
    expect(sha256(await readFile(started.bundle))).toBe(release.sha256);
    expect(((await stat(started.bundle)).mode & 0o777).toString(8)).toBe('755');
    expect(logOf(started)).toMatch(/restarted: the new build runs as process \d+/);
  }, 90_000);

  it('keeps running its version when the download does not match the checksum of the channel, and says why', async () => {
    // Prepare: the download is altered on its way (same size, other bytes)
    const started = await startOldAgent('tampered', await startProxy({ tamper: true }));
    // Act
    await expect
      .poll(() => logOf(started), { timeout: 20_000 })
      .toContain(`the download of agent ${SHIPPED} does not match the server's checksum`);
    // Assess: nothing installed, still running 1.0.0, still the same target, marked outdated
    expect(sha256(await readFile(started.bundle))).toBe(sha256(oldBundle));
    expect(logOf(started)).toContain(`keeping ${RUNNING}`);
    expect(logOf(started)).not.toContain('installed agent');
    expect(await targetOf(started.agent.targetId)).toMatchObject({
      agent_version: RUNNING,
      agent_outdated: true,
      status: 'online',
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await Promise.race([started.agent.exited, Promise.resolve('running')])).toBe('running');
  }, 60_000);
});
