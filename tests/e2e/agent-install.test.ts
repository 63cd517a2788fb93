// The one-line install (agent/install.sh) against a real stack, from a folder outside the checkout: nothing is copied
// from the checkout; the script and the agent come from the stack's front, the way a host gets them. With a PATH of
// only the tools the script needs (no systemctl: the container branch) it installs under a prefix, enrolls, and prints
// the foreground command; that command runs the agent, which shows online, runs a deployment, survives a kill -9
// mid-command without running it twice; running the script again upgrades in place keeping the identity; a fake
// systemctl records the systemd branch's calls; a tampered checksum, a missing Node and --uninstall leave nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../agent/version.js';
import { ROOT } from '../../local/service-definition.js';
import { startStack, type Stack } from '../../local/stack.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const TERMINAL = ['success', 'failed', 'cancelled', 'rolled_back'];
/** What install.sh calls, besides the shell's builtins (and systemctl, which the systemd case fakes). */
const TOOLS = [
  'sh',
  'curl',
  'sha256sum',
  'cut',
  'mktemp',
  'rm',
  'mkdir',
  'rmdir',
  'cp',
  'mv',
  'chmod',
  'chown',
  'cat',
  'grep',
  'sort',
  'dirname',
  'basename',
  'id',
];

let stack: Stack;
let admin: string;
let work = '';
let bin = '';
let fakeBin = '';
const agents: ChildProcess[] = [];

const api = apiClient(() => stack.baseUrl);
const call = (method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token: admin, body });

const which = (tool: string): string => {
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new Error(`${tool} is not installed`);
};

interface Run {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** Runs a shell line from the work folder with only `path` on PATH. */
const sh = (line: string, path = bin): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', line], { cwd: work, env: { PATH: path, HOME: work } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });

/** The README's line, with the options the tests add (`--server` too unless `path` is the systemd case's). */
const install = (args: string, path = bin) =>
  sh(
    `curl -fsSL ${stack.baseUrl}/agent/install.sh | sh -s -- ${path === bin ? `--server ${stack.baseUrl} ` : ''}${args}`,
    path,
  );

const enrollmentToken = async (tags: { key: string; value: string }[] = []) => {
  const reply = await call('POST', '/targets/enrollment-tokens', { tags, expires_in_hours: 1 });
  expect(reply.status).toBe(201);
  return reply.json.token as string;
};

/** Every path under `dir`, relative, sorted. */
const tree = async (dir: string): Promise<string[]> =>
  existsSync(dir) ? ((await readdir(dir, { recursive: true })) as string[]).sort() : [];

const waitFor = async <T>(what: string, check: () => Promise<T | undefined>, withinMs = 60_000): Promise<T> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

/** Starts the printed foreground command from the work folder; its process is the agent (the wrapper execs node). */
const startForeground = (command: string): { child: ChildProcess; output: () => string } => {
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: work, env: { ...process.env, HOME: work } });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  agents.push(child);
  return { child, output: () => output };
};

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

const deploy = async (targetId: string, slug: string, script: string): Promise<string> => {
  const action = await call('POST', '/actions', { slug, name: slug, version: { version: '1.0.0', script } });
  expect(action.status).toBe(201);
  const created = await call('POST', '/deployments', { action_id: action.json.id, target_ids: [targetId] });
  expect(created.status).toBe(201);
  return created.json.deployment_id as string;
};

const ended = (id: string, withinMs = 60_000) =>
  waitFor(
    `deployment ${id} to end`,
    async () => {
      const d = (await call('GET', `/deployments/${id}`)).json;
      return TERMINAL.includes(d.state) ? d : undefined;
    },
    withinMs,
  );

const lines = async (file: string) =>
  existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '') : [];

beforeAll(async () => {
  stack = await startStack({ port: 0, namePrefix: `${uniqueName('install')}-`, bootstrapAdmin: ADMIN });
  admin = (await api.login(ADMIN)).token;
  work = await mkdtemp(join(tmpdir(), 'deployer-install-'));
  bin = join(work, 'bin');
  fakeBin = join(work, 'bin-systemd');
  await mkdir(bin);
  await mkdir(fakeBin);
  for (const tool of TOOLS) {
    await symlink(which(tool), join(bin, tool));
    await symlink(which(tool), join(fakeBin, tool));
  }
  // A systemctl that answers yes to everything and writes down what it was asked.
  await writeFile(join(fakeBin, 'systemctl'), `#!/bin/sh\necho "$*" >> ${join(work, 'systemctl.calls')}\nexit 0\n`);
  await chmod(join(fakeBin, 'systemctl'), 0o755);
});

afterAll(async () => {
  for (const child of agents) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await stack?.stop();
  if (work !== '') await rm(work, { recursive: true, force: true });
});

describe('install.sh', () => {
  it('passes shellcheck, as served', async () => {
    const served = await fetch(`${stack.baseUrl}/agent/install.sh`);
    expect(served.status).toBe(200);
    const text = await served.text();
    expect(text).toContain(`SHA256='${stack.programs.agent!.sha256}'`);
    expect(text).not.toMatch(/@@[A-Z0-9_]+@@/);
    expect(text).toContain(`DEFAULT_SERVER='${stack.baseUrl}'`); // the systemd case below relies on it
    await writeFile(join(work, 'served-install.sh'), text);
    // CI installs shellcheck (.ci/run); a machine without it fails here rather than skipping the check.
    for (const file of [join(work, 'served-install.sh'), join(ROOT, 'agent', 'install.sh')]) {
      const result = spawnSync('shellcheck', ['-s', 'sh', file], { encoding: 'utf8' });
      expect(result.error, 'shellcheck is not installed (apt-get install shellcheck)').toBeUndefined();
      expect([file, result.status, result.stdout]).toEqual([file, 0, '']);
    }
  });

  it('refuses a Node.js that is not there, naming Node.js 22, and installs nothing', async () => {
    const prefix = join(work, 'no-node');
    const result = await install(`--prefix ${prefix} --enroll det_unused --node /nonexistent`);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/Node\.js 22 or later is needed: \/nonexistent is not an executable file/);
    expect(await tree(prefix)).toEqual([]);
  });

  it('names what is missing: curl or wget, a user to run as', async () => {
    // Prepare: the served script, and a PATH without curl (nor wget)
    const noCurl = join(work, 'bin-no-curl');
    await mkdir(noCurl);
    for (const tool of TOOLS.filter((t) => t !== 'curl')) await symlink(which(tool), join(noCurl, tool));
    const served = `${work}/served-install.sh`;
    await writeFile(served, await (await fetch(`${stack.baseUrl}/agent/install.sh`)).text());
    const prefix = join(work, 'missing');
    // Act
    const withoutCurl = await sh(`sh ${served} --prefix ${prefix} --node ${process.execPath}`, noCurl);
    const noUser = await sh(`sh ${served} --prefix ${prefix} --user no-such-user --node ${process.execPath}`);
    // Assess
    expect([withoutCurl.code, noUser.code]).toEqual([1, 1]);
    expect(withoutCurl.err).toContain('neither curl nor wget is installed; install one (apt-get install curl');
    expect(noUser.err).toContain('--user no-such-user: there is no such user');
    expect(await tree(prefix)).toEqual([]);
  });

  it('refuses a download whose checksum is not the one it embeds, and installs nothing', async () => {
    const prefix = join(work, 'tampered');
    const token = await enrollmentToken();
    // The script as served, but expecting another checksum: the bundle no longer matches it.
    const result = await sh(
      `curl -fsSL ${stack.baseUrl}/agent/install.sh > tampered.sh && ` +
        `grep -v "^SHA256=" tampered.sh > t.sh && ` +
        `{ echo "SHA256='${'0'.repeat(64)}'"; cat t.sh; } > tampered.sh && ` +
        `sh tampered.sh --server ${stack.baseUrl} --prefix ${prefix} --enroll ${token} --node ${process.execPath}`,
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain(`checksum mismatch: ${stack.baseUrl}${stack.programs.agent!.path} has SHA-256 `);
    expect(result.err).toContain('nothing was installed');
    expect(await tree(prefix)).toEqual([]);
  });
});

describe('installed without systemd, then run in the foreground', () => {
  let prefix = '';
  let foreground = '';
  let targetId = '';
  let agent: { child: ChildProcess; output: () => string };

  beforeAll(async () => {
    prefix = join(work, 'root');
    await mkdir(join(prefix, 'etc'), { recursive: true }); // a folder that was there before: kept by --uninstall
  });

  it(
    'installs, enrolls once with the token’s tags, writes a unit systemd-analyze accepts, and exits 3 with the command',
    { timeout: 60_000 },
    async () => {
      // Act
      const token = await enrollmentToken([{ key: 'role', value: 'installed' }]);
      const result = await install(
        `--prefix ${prefix} --enroll ${token} --name installed-1 --node ${process.execPath}`,
      );
      // Assess
      expect(result.code, result.out + result.err).toBe(3);
      expect(result.out).toContain('checksum verified');
      expect(result.out).toMatch(/enrolled with \S+ as target \S+ \(\S+\), tags role=installed/);
      expect(result.out).toContain('there is no running systemd here');
      foreground = /^ {2}(\S+\/opt\/deployer-agent\/deployer-agent .*)$/m.exec(result.out)![1]!;
      expect(foreground).toBe(
        `${prefix}/opt/deployer-agent/deployer-agent --server ${stack.baseUrl} --state-dir ${prefix}/var/lib/deployer-agent --name 'installed-1'`,
      );
      const state = JSON.parse(await readFile(join(prefix, 'var/lib/deployer-agent/state.json'), 'utf8'));
      targetId = state.target_id;
      expect((await stat(join(prefix, 'var/lib/deployer-agent'))).mode & 0o777).toBe(0o700);
      expect((await stat(join(prefix, 'etc/deployer-agent/agent.env'))).mode & 0o777).toBe(0o600);
      expect(await readFile(join(prefix, 'opt/deployer-agent/deployer-agent.mjs'))).toHaveLength(
        stack.programs.agent!.size,
      );
      const unitFile = join(prefix, 'etc/systemd/system/deployer-agent.service');
      const unit = await readFile(unitFile, 'utf8');
      expect(unit).toContain(
        `ExecStart=${process.execPath} ${prefix}/opt/deployer-agent/deployer-agent.mjs --server ${stack.baseUrl} --state-dir ${prefix}/var/lib/deployer-agent --name "installed-1" $DEPLOYER_AGENT_ARGS`,
      );
      for (const line of [
        'Restart=always',
        'RestartSec=1',
        'After=network-online.target',
        'Wants=network-online.target',
        'KillMode=mixed',
        'StandardOutput=journal',
      ])
        expect(unit).toContain(`\n${line}\n`);
      const verify = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
      expect(verify.error, 'systemd-analyze is not installed').toBeUndefined();
      expect([verify.status, verify.stderr]).toEqual([0, '']);
      const target = (await call('GET', `/targets/${targetId}`)).json;
      expect(target).toMatchObject({ name: 'installed-1', tags: [{ key: 'role', value: 'installed' }] });
    },
  );

  it(
    'runs with the printed command: online with its version, and a deployment runs on it',
    { timeout: 60_000 },
    async () => {
      // Act
      agent = startForeground(foreground);
      // Assess
      const online = await waitFor('the installed agent to be online', async () => {
        const target = (await call('GET', `/targets/${targetId}`)).json;
        return target.status === 'online' && agent.output().includes('connected over WebSocket') ? target : undefined;
      });
      expect(online.agent_version).toBe(AGENT_VERSION);
      const id = await deploy(targetId, 'installed-hello', 'echo "hello via the installed agent"');
      expect((await ended(id)).state).toBe('success');
      const history = JSON.stringify((await call('GET', `/deployments/${id}/logs/history?limit=100`)).json);
      expect(history).toContain('via the installed agent');
    },
  );

  it(
    'after a kill -9 mid-command and a restart, the deployment ends and the command ran once',
    { timeout: 90_000 },
    async () => {
      // Prepare
      const runs = join(work, 'long.runs');
      const id = await deploy(targetId, 'installed-long', `echo started >> ${runs}; sleep 5; echo done >> ${runs}`);
      await waitFor('the command to start', async () => ((await lines(runs)).length > 0 ? true : undefined));
      // Act
      agent.child.kill('SIGKILL');
      await exited(agent.child);
      agent = startForeground(foreground);
      // Assess
      const done = await ended(id);
      expect(done.state).toBe('failed');
      expect(done.plan.steps[0].error_message).toBe('The agent restarted while the command was running');
      await new Promise((r) => setTimeout(r, 6_000)); // past the sleep: a second run or the first's end would show
      expect(await lines(runs)).toEqual(['started']);
      const next = await deploy(targetId, 'installed-after', 'echo after the restart');
      expect((await ended(next)).state).toBe('success');
    },
  );

  it(
    'running the script again upgrades in place and keeps the identity, with or without --enroll',
    { timeout: 60_000 },
    async () => {
      // Prepare
      agent.child.kill('SIGTERM');
      await exited(agent.child);
      const statePath = join(prefix, 'var/lib/deployer-agent/state.json');
      const before = { text: await readFile(statePath, 'utf8'), mtime: (await stat(statePath)).mtimeMs };
      // Act
      const upgrade = await install(`--prefix ${prefix} --node ${process.execPath}`);
      const again = await install(`--prefix ${prefix} --enroll ${await enrollmentToken()} --node ${process.execPath}`);
      // Assess
      expect(upgrade.code, upgrade.out + upgrade.err).toBe(3);
      expect(upgrade.out).toContain('checksum verified');
      expect(upgrade.out).toContain('upgrading in place: keeping the identity');
      expect(upgrade.out).toContain(`already enrolled with ${stack.baseUrl} as target ${targetId}`);
      expect(again.code).toBe(3);
      expect(again.out).toContain(`keeping this identity, the enrollment token was not used`);
      expect(await readFile(statePath, 'utf8')).toBe(before.text);
      expect((await stat(statePath)).mtimeMs).toBe(before.mtime);
      // still the same target, and it comes online again
      agent = startForeground(foreground);
      await waitFor('the upgraded agent to be online', async () =>
        agent.output().includes(`using the enrollment in ${prefix}/var/lib/deployer-agent (target ${targetId})`) &&
        (await call('GET', `/targets/${targetId}`)).json.status === 'online'
          ? true
          : undefined,
      );
      agent.child.kill('SIGTERM');
      await exited(agent.child);
    },
  );

  it('--uninstall leaves nothing behind but the folders that were there before', async () => {
    const result = await install(`--prefix ${prefix} --uninstall`);
    expect(result.code, result.out + result.err).toBe(0);
    expect(result.out).toContain('removed');
    expect(await tree(prefix)).toEqual(['etc']);
  });
});

describe('installed with systemd (a systemctl that records its calls), without --server (the script names its own)', () => {
  it(
    'reloads, enables and starts the unit; restarts it on upgrade; disables it on --uninstall',
    { timeout: 60_000 },
    async () => {
      // Prepare
      const prefix = join(work, 'systemd-root');
      const calls = join(work, 'systemctl.calls');
      const path = fakeBin;
      // Act
      const first = await install(
        `--prefix ${prefix} --enroll ${await enrollmentToken()} --node ${process.execPath}`,
        path,
      );
      const afterFirst = await lines(calls);
      const upgrade = await install(`--prefix ${prefix} --node ${process.execPath}`, path);
      const afterUpgrade = (await lines(calls)).slice(afterFirst.length);
      const removed = await install(`--prefix ${prefix} --uninstall`, path);
      const afterRemove = (await lines(calls)).slice(afterFirst.length + afterUpgrade.length);
      // Assess
      expect(first.code, first.out + first.err).toBe(0);
      expect(first.out).toContain('started deployer-agent.service');
      expect(afterFirst.filter((c) => c !== 'show-environment')).toEqual([
        'daemon-reload',
        'enable --now deployer-agent.service',
      ]);
      expect(upgrade.code).toBe(0);
      expect(afterUpgrade.filter((c) => c !== 'show-environment')).toEqual([
        'daemon-reload',
        'enable deployer-agent.service',
        'restart deployer-agent.service',
      ]);
      expect(removed.code).toBe(0);
      expect(afterRemove.filter((c) => c !== 'show-environment')).toEqual([
        'disable --now deployer-agent.service',
        'daemon-reload',
      ]);
      expect(await tree(prefix)).toEqual([]);
    },
  );
});
