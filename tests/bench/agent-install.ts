// Benchmark (figures printed, nothing asserted): what the one-line install costs a host. Run with
//   npm run bench:agent-install
// Against a local stack, from a temporary folder outside the checkout, with the bundle and install.sh its front
// serves (as tests/e2e/agent-install.test.ts does):
//   1. the bundle's size, raw and gzip (what a host downloads; goal <= 150 KB gzip)
//   2. install-to-online: install.sh started (the bundle downloaded beforehand and timed apart) -> checked, installed,
//      enrolled -> the printed foreground command started -> connected over WebSocket and online (goal <= 3 s)
//   3. idle resident memory of the installed agent 30 s after it connected (goal <= 70 MB)
//   4. restart-to-online: SIGTERM (what `systemctl restart` sends) -> stopped -> started again -> connected and online
//      (goal <= 1 s; this machine has no running systemd, so the restart is done by hand)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startStack } from '../../local/stack.js';
import { runBench, signedIn } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const IDLE_SECONDS = 30;
const TOOLS = ['sh', 'curl', 'sha256sum', 'cut', 'mktemp', 'rm', 'mkdir', 'rmdir', 'cp', 'mv', 'chmod', 'chown'];
const MORE_TOOLS = ['cat', 'grep', 'sort', 'dirname', 'basename', 'id'];

const which = (tool: string): string => {
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) if (existsSync(join(dir, tool))) return join(dir, tool);
  throw new Error(`${tool} is not installed`);
};

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (value: number) => `${value.toFixed(0)} ms`;

const main = async () => {
  const stack = await startStack({
    port: 0,
    namePrefix: `bench-install-${process.pid}-`,
    bootstrapAdmin: ADMIN,
    warm: true,
  });
  const work = await mkdtemp(join(tmpdir(), 'deployer-bench-install-'));
  const children: ChildProcess[] = [];
  try {
    const { call } = await signedIn(stack, ADMIN);
    const bin = join(work, 'bin');
    await mkdir(bin);
    for (const tool of [...TOOLS, ...MORE_TOOLS]) await symlink(which(tool), join(bin, tool));

    // 1. the bundle
    const downloadStarted = performance.now();
    const bundle = new Uint8Array(await (await fetch(`${stack.baseUrl}/agent/deployer-agent.mjs`)).arrayBuffer());
    const downloadMs = performance.now() - downloadStarted;
    const gzip = gzipSync(bundle, { level: 9 }).length;
    console.log(`bundle: ${kb(bundle.length)} raw, ${kb(gzip)} gzip -9 (goal <= 150 KB gzip)`);

    // 2. install-to-online
    const script = await (await fetch(`${stack.baseUrl}/agent/install.sh`)).text();
    const { token } = (await call('POST', '/targets/enrollment-tokens', {})) as { token: string };
    const prefix = join(work, 'root');
    const started = performance.now();
    const installed = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn(
        '/bin/sh',
        ['-s', '--', '--server', stack.baseUrl, '--prefix', prefix, '--enroll', token, '--node', process.execPath],
        { cwd: work, env: { PATH: bin, HOME: work } },
      );
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out }));
      child.stdin.end(script);
    });
    const scriptMs = performance.now() - started;
    if (installed.code !== 3) throw new Error(`install.sh exited ${installed.code}:\n${installed.out}`);
    const foreground = /^ {2}(\S+\/deployer-agent .*)$/m.exec(installed.out)![1]!;
    const targetId = (
      JSON.parse(await readFile(join(prefix, 'var/lib/deployer-agent/state.json'), 'utf8')) as {
        target_id: string;
      }
    ).target_id;

    const start = () => {
      const child = spawn('/bin/sh', ['-c', `exec ${foreground}`], { cwd: work, env: { ...process.env, HOME: work } });
      children.push(child);
      let output = '';
      child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      return { child, output: () => output };
    };
    const online = async (agent: ReturnType<typeof start>, from: number) => {
      for (;;) {
        if (agent.output().includes('connected over WebSocket')) {
          const target = (await call('GET', `/targets/${targetId}`)) as { status: string };
          if (target.status === 'online') return performance.now() - from;
        }
        if (performance.now() - from > 30_000) throw new Error(`not online after 30 s:\n${agent.output()}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const agentStarted = performance.now();
    let agent = start();
    const connectMs = await online(agent, agentStarted);
    const installToOnline = scriptMs + connectMs;
    console.log(
      `install-to-online: ${ms(installToOnline)} (install.sh ${ms(scriptMs)} incl. its download from localhost; ` +
        `agent start -> connected and online ${ms(connectMs)}; the bundle's download alone: ${ms(downloadMs)}) (goal <= 3 s)`,
    );

    // 3. idle memory
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
    const status = await readFile(`/proc/${agent.child.pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
    const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
    console.log(
      `idle agent after ${IDLE_SECONDS} s: RSS ${(rss / 2 ** 20).toFixed(1)} MiB (peak ${(hwm / 2 ** 20).toFixed(1)} MiB) (goal <= 70 MB)`,
    );

    // 4. restart-to-online
    const restartStarted = performance.now();
    const old = agent.child;
    const stoppedAt = await new Promise<number>((resolve) => {
      old.once('exit', () => resolve(performance.now()));
      old.kill('SIGTERM');
    });
    agent = start();
    const restartMs = await online(agent, restartStarted);
    console.log(
      `restart-to-online: ${ms(restartMs)} (stop ${ms(stoppedAt - restartStarted)}, start -> connected and online ${ms(restartMs - (stoppedAt - restartStarted))}) (goal <= 1 s)`,
    );
    if (process.env['BENCH_VERBOSE'] === '1') console.log(installed.out, agent.output());
    agent.child.kill('SIGTERM');
    await new Promise((r) => agent.child.once('exit', r));
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await stack.stop();
    await rm(work, { recursive: true, force: true });
  }
};

await runBench(main);
