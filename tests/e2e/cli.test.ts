// The command line (issue 32) against the real stack and agents, as a pipeline runs it: the built one-file
// `deployer.mjs` run by node from a folder outside the checkout, configured by DEPLOYER_URL and DEPLOYER_API_KEY.
// Exit codes (0 success, 1 failed, 2 usage, 3 refused, 4 unreachable, 5 cancelled, 6 timeout), --output json,
// logs --follow across a dropped connection, secrets kept out of the process list and the output, and the served
// file and install script.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../programs/build.js';
import { startCutProxy } from '../support/cut-proxy.js';
import { apiClient } from '../support/http.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';
import { createUser } from '../support/users.js';

const e2e = useStackWithAgents('cli');
const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { token: e2e.admin, body });

let dir: string;
let cliFile: string;
let key: string;

beforeAll(async () => {
  const built = await buildProgram('cli');
  const bundle = built.files.get('/cli/deployer.mjs');
  if (bundle === undefined) throw new Error('no /cli/deployer.mjs built');
  dir = await mkdtemp(join(tmpdir(), 'deployer-cli-run-'));
  cliFile = join(dir, 'deployer.mjs');
  await writeFile(cliFile, bundle.contents, { mode: 0o755 });
  const created = await call('POST', '/auth/api-keys', {
    name: 'cli-e2e',
    scopes: [
      'deployments:read',
      'deployments:create',
      'deployments:cancel',
      'deployments:redeploy',
      'pending_deployments:read',
      'actions:read',
      'sequences:read',
      'solutions:read',
      'targets:read',
    ],
  });
  expect(created.status).toBe(201);
  key = created.json.full_key;
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly done: Promise<{ code: number; stdout: string; stderr: string }>;
}

/** Starts the built CLI (node deployer.mjs ...) in the scratch folder with a pipeline's environment. */
const start = (args: readonly string[], options: { env?: Record<string, string>; input?: string } = {}): Run => {
  const child = spawn(process.execPath, [cliFile, ...args], {
    cwd: dir,
    env: {
      PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      DEPLOYER_URL: e2e.stack.baseUrl,
      DEPLOYER_API_KEY: key,
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const run = { child, stdout: '', stderr: '' } as Run;
  child.stdout?.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
  child.stdin?.end(options.input ?? '');
  (run as { done: Run['done'] }).done = new Promise((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: run.stdout, stderr: run.stderr })),
  );
  return run;
};
const cli = (args: readonly string[], options: { env?: Record<string, string>; input?: string } = {}) =>
  start(args, options).done;

const until = async (what: string, check: () => boolean, withinMs = 30_000) => {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

let n = 0;
/** A new action with one version running `script`; its slug. */
const action = async (script: string, variables?: unknown[]): Promise<string> => {
  n += 1;
  const slug = `cli-act-${n}`;
  const created = await call('POST', '/actions', {
    slug,
    name: `CLI action ${n}`,
    version: { version: '1.0.0', script, ...(variables ? { variables } : {}) },
  });
  expect(created.status).toBe(201);
  return slug;
};
const deploymentCount = async () => (await call('GET', '/deployments?limit=1')).json.meta.total as number;

describe('deployer (the command line)', () => {
  it('deploy --wait: prints the log lines and exits 0 on success', async () => {
    const slug = await action('echo "hello from $DEPLOYER_ACTION_SLUG"; echo to-stderr >&2');
    const { code, stdout, stderr } = await cli(['deploy', '--action', slug, '--tag', 'role=web', '--wait']);
    expect([code, stderr]).toEqual([0, expect.stringMatching(/Deployment \S+ success/)]);
    expect(stdout).toContain(`local-1 | hello from ${slug}`);
    expect(stdout).toContain('local-1 | to-stderr');
    expect(stdout).not.toMatch(/\x1b\[/); // piped: no colors
  });

  it('--output json: one JSON document on stdout, the deployment as GET shows it', async () => {
    const slug = await action('echo json-run');
    const { code, stdout } = await cli(['deploy', '--action', slug, '--target', 'local-2', '--wait', '-o', 'json']);
    expect(code).toBe(0);
    const document = JSON.parse(stdout);
    expect(document).toMatchObject({ state: 'success', action_name: `CLI action ${n}`, completed_steps: 1 });
    expect(document.plan.steps[0]).toMatchObject({ target_name: 'local-2', exit_code: 0 });
    expect((await call('GET', `/deployments/${document.id}`)).json).toEqual(document);
  });

  it('exits 1 when the command fails, with its output printed', async () => {
    const slug = await action('echo about-to-fail; exit 3');
    const { code, stdout, stderr } = await cli(['deploy', '--action', slug, '--tag', 'role=web', '--wait']);
    expect([code, stderr]).toEqual([1, expect.stringMatching(/Deployment \S+ failed/)]);
    expect(stdout).toContain('local-1 | about-to-fail');
  });

  it('exits 5 when another client cancels the deployment it waits for', async () => {
    const slug = await action('echo slow-started; sleep 60');
    const run = start(['deploy', '--action', slug, '--tag', 'role=web', '--wait']);
    await until('the deployment to start', () => run.stdout.includes('slow-started'));
    const id = /Started deployment (\S+)/.exec(run.stderr)?.[1];
    expect((await call('POST', `/deployments/${id}/cancel`, { reason: 'from another client' })).status).toBe(200);
    const { code, stderr } = await run.done;
    expect([code, stderr]).toEqual([5, expect.stringMatching(/cancelled/)]);
  });

  it('logs --follow survives a dropped connection: every line once, resumed with last_event_id', async () => {
    const slug = await action('for i in 1 2 3 4 5 6 7 8; do echo "line-$i"; sleep 0.5; done');
    const actionId = (await call('GET', `/actions?limit=100`)).json.data.find(
      (a: { slug: string }) => a.slug === slug,
    ).id;
    const created = await call('POST', '/deployments', {
      action_id: actionId,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    const url = new URL(e2e.stack.baseUrl);
    const proxy = await startCutProxy({ host: url.hostname, port: Number(url.port) });
    try {
      const run = start(['logs', created.json.deployment_id, '--follow'], { env: { DEPLOYER_URL: proxy.url } });
      await until('line-2', () => run.stdout.includes('line-2'));
      proxy.cut(300);
      const { code, stdout, stderr } = await run.done;
      expect([code, stderr]).toEqual([0, expect.stringContaining('the log stream dropped; resuming after event')]);
      for (let i = 1; i <= 8; i += 1) expect(stdout.split(`| line-${i}\n`).length - 1).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('a freeze refuses the deploy: exit 3, the envelope on stderr, nothing created', async () => {
    const slug = await action('echo never');
    const freeze = await call('POST', '/deployment-freezes', {
      name: 'CLI test freeze',
      start_time: new Date(Date.now() - 60_000).toISOString(),
      end_time: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(freeze.status).toBe(201);
    try {
      const before = await deploymentCount();
      const { code, stderr, stdout } = await cli(['deploy', '--action', slug, '--tag', 'role=web', '--wait']);
      expect(code).toBe(3);
      expect(stderr).toMatch(/refused \(409 DEPLOYMENT_FROZEN\)/);
      expect(stderr).toContain('CLI test freeze');
      expect(stdout).toBe('');
      expect(await deploymentCount()).toBe(before);
    } finally {
      expect((await call('DELETE', `/deployment-freezes/${freeze.json.id}`)).status).toBeLessThan(300);
    }
  });

  it('--override-freeze --reason deploys through a freeze (an admin key with freezes:update); no --reason is usage', async () => {
    const slug = await action('echo through-the-freeze');
    const adminKey = await call('POST', '/auth/api-keys', {
      name: 'cli-admin',
      scopes: ['deployments:read', 'deployments:create', 'actions:read', 'targets:read', 'freezes:update'],
    });
    expect(adminKey.status).toBe(201);
    const freeze = await call('POST', '/deployment-freezes', {
      name: 'CLI override freeze',
      start_time: new Date(Date.now() - 60_000).toISOString(),
      end_time: new Date(Date.now() + 3_600_000).toISOString(),
    });
    try {
      const env = { DEPLOYER_API_KEY: adminKey.json.full_key };
      const noReason = await cli(['deploy', '--action', slug, '--tag', 'role=web', '--override-freeze'], { env });
      expect([noReason.code, noReason.stderr]).toEqual([
        2,
        expect.stringContaining('--override-freeze needs --reason'),
      ]);
      const through = await cli(
        ['deploy', '--action', slug, '--tag', 'role=web', '--override-freeze', '--reason', 'incident 42', '--wait'],
        { env },
      );
      expect([through.code, through.stdout]).toEqual([0, expect.stringContaining('local-1 | through-the-freeze')]);
    } finally {
      await call('DELETE', `/deployment-freezes/${freeze.json.id}`);
    }
  });

  it('--preview prints the plan and creates nothing; a refused preview exits 3', async () => {
    const slug = await action('echo preview');
    const before = await deploymentCount();
    const preview = await cli(['deploy', '--action', slug, '--tag', 'env=local', '--preview']);
    expect(preview.code).toBe(0);
    expect(preview.stdout).toMatch(/Preview: action CLI action \d+ 1\.0\.0 on 2 target/);
    expect(preview.stdout).toMatch(/local-1[\s\S]*local-2/);
    const refused = await cli(['deploy', '--action', slug, '--tag', 'env=local', '--var', 'UNDECLARED=1', '--dry-run']);
    expect([refused.code, refused.stderr]).toEqual([3, expect.stringContaining('400 VALIDATION_ERROR')]);
    expect(await deploymentCount()).toBe(before);
  });

  it('redeploy --wait -o json: the new deployment, pointing at the original', async () => {
    const slug = await action('echo again');
    const first = JSON.parse(
      (await cli(['deploy', '--action', slug, '--tag', 'role=web', '--wait', '-o', 'json'])).stdout,
    );
    const again = await cli(['redeploy', first.id, '--wait', '-o', 'json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ state: 'success', source_deployment_id: first.id });
  });

  it('an API key without deployments:create is refused: exit 3 with the code, nothing created', async () => {
    const slug = await action('echo never');
    const readOnly = await call('POST', '/auth/api-keys', {
      name: 'cli-read-only',
      scopes: ['deployments:read', 'actions:read', 'targets:read'],
    });
    const before = await deploymentCount();
    const { code, stderr } = await cli(['deploy', '--action', slug, '--tag', 'role=web', '--wait'], {
      env: { DEPLOYER_API_KEY: readOnly.json.full_key },
    });
    expect([code, stderr]).toEqual([3, expect.stringMatching(/refused \(403 INSUFFICIENT_PERMISSIONS\)/)]);
    expect(await deploymentCount()).toBe(before);
  });

  it('--secret-var: the value from stdin reaches the command, never the process list or the output', async () => {
    const secret = `s3cr3t-${Date.now()}-value`;
    const slug = await action('sleep 2; [ "$DB_PASSWORD" = "$EXPECTED_LEN" ] || echo "secret-length-${#DB_PASSWORD}"', [
      { name: 'DB_PASSWORD', secret: true, required: true },
      { name: 'EXPECTED_LEN', default: 'x' },
    ]);
    const run = start(['deploy', '--action', slug, '--tag', 'role=web', '--secret-var', 'DB_PASSWORD', '--wait'], {
      input: `${secret}\n`,
    });
    await until('the deployment to start', () => run.stderr.includes('Started deployment'));
    const processes = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
    expect(processes).toContain(String(run.child.pid));
    expect(processes).not.toContain(secret);
    const { code, stdout, stderr } = await run.done;
    expect(code).toBe(0);
    expect(stdout).toContain(`secret-length-${secret.length}`);
    expect(stdout + stderr).not.toContain(secret);
    // From the environment variable of the same name, and a usage error when neither gives one.
    const fromEnv = await cli(
      ['deploy', '--action', slug, '--tag', 'role=web', '--secret-var', 'DB_PASSWORD', '--wait'],
      {
        env: { DB_PASSWORD: secret },
      },
    );
    expect([fromEnv.code, fromEnv.stdout]).toEqual([0, expect.stringContaining(`secret-length-${secret.length}`)]);
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain(secret);
    const none = await cli(['deploy', '--action', slug, '--tag', 'role=web', '--secret-var', 'DB_PASSWORD']);
    expect([none.code, none.stderr]).toEqual([2, expect.stringContaining('--secret-var DB_PASSWORD: no environment')]);
    // A value on the command line is refused without being echoed.
    const inArgv = await cli([
      'deploy',
      '--action',
      slug,
      '--tag',
      'role=web',
      '--secret-var',
      `DB_PASSWORD=${secret}`,
    ]);
    expect(inArgv.code).toBe(2);
    expect(inArgv.stderr).toContain('--secret-var takes a name only');
    expect(inArgv.stdout + inArgv.stderr).not.toContain(secret);
  });

  it('exit 4 when the service cannot be reached, 2 for an unknown flag naming it', async () => {
    const unreachable = await cli(['status', 'abc'], { env: { DEPLOYER_URL: 'http://127.0.0.1:9' } });
    expect([unreachable.code, unreachable.stderr]).toEqual([4, expect.stringContaining('cannot reach')]);
    const unknown = await cli(['deploy', '--action', 'x', '--tag', 'role=web', '--frobnicate']);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('unknown flag --frobnicate')]);
    expect(unknown.stderr).toContain('Usage: deployer deploy');
    const help = await cli(['deploy', '--help']);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('Exit codes:')]);
  });

  it('--timeout: exit 6, the deployment keeps running', async () => {
    const slug = await action('echo long; sleep 60');
    const { code, stderr } = await cli(['deploy', '--action', slug, '--tag', 'role=db', '--wait', '--timeout', '3s']);
    expect([code, stderr]).toEqual([6, expect.stringContaining('keeps running')]);
    const id = /Started deployment (\S+)/.exec(stderr)?.[1];
    expect((await call('GET', `/deployments/${id}`)).json.state).toBe('running');
    await call('POST', `/deployments/${id}/cancel`, {});
  });

  it('a queued deploy --wait prints its position, then runs when an instance frees up', async () => {
    const slug = await action('echo after-the-queue');
    expect((await call('PUT', '/admin/orchestration', { instances: 0 })).status).toBe(200);
    try {
      const run = start(['deploy', '--action', slug, '--tag', 'role=web', '--wait']);
      await until('the queue position', () => run.stderr.includes('Queued: position 1'));
      // `deployer queue` says what waits: the action, its version and how many targets.
      const listed = await cli(['queue']);
      expect([listed.code, listed.stdout]).toEqual([0, expect.stringMatching(/CLI action \d+ 1\.0\.0 on 1 target/)]);
      expect((await call('PUT', '/admin/orchestration', { instances: 4 })).status).toBe(200);
      const { code, stdout } = await run.done;
      expect([code, stdout]).toEqual([0, expect.stringContaining('local-1 | after-the-queue')]);
    } finally {
      await call('PUT', '/admin/orchestration', { instances: 4 });
    }
  });

  it('targets, status and queue answer JSON for scripts', async () => {
    const targets = await cli(['targets', '--tag', 'role=web', '-o', 'json']);
    expect(JSON.parse(targets.stdout).map((t: { name: string }) => t.name)).toEqual(['local-1']);
    const queue = await cli(['queue', '-o', 'json']);
    expect([queue.code, JSON.parse(queue.stdout)]).toEqual([0, []]);
    const text = await cli(['targets']);
    expect(text.stdout).toMatch(/local-1\s+\S+\s+online/);
  });

  it('login keeps a rotating refresh token in a 0600 file; logout revokes it and deletes it', async () => {
    // Its own user: logout revokes every token of the account.
    await createUser('cli-person@example.com', 'person-password', ['user']);
    const config = join(dir, 'login-config');
    const env = { DEPLOYER_API_KEY: '', XDG_CONFIG_HOME: config };
    const login = await cli(['login', '--email', 'cli-person@example.com'], { env, input: 'person-password\n' });
    expect([login.code, login.stderr]).toEqual([0, expect.stringContaining('Logged in to')]);
    const file = join(config, 'deployer', 'credentials.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = () => readFile(file, 'utf8').then((t) => JSON.parse(t).servers[e2e.stack.baseUrl]);
    const first = await saved();
    expect(first).toMatchObject({ refresh_token: expect.any(String), access_token: expect.any(String) });
    // The access token is reused while it lasts; once it is gone, two commands at once refresh only once (a refresh
    // token spent twice would revoke the login).
    await writeFile(file, JSON.stringify({ servers: { [e2e.stack.baseUrl]: { ...first, access_token: undefined } } }));
    const both = await Promise.all([cli(['targets', '-o', 'json'], { env }), cli(['queue', '-o', 'json'], { env })]);
    expect(both.map((r) => r.code)).toEqual([0, 0]);
    expect(JSON.parse(both[0].stdout).length).toBe(2);
    const rotated = (await saved()).refresh_token;
    expect(rotated).not.toBe(first.refresh_token);
    expect((await cli(['queue'], { env })).code).toBe(0);
    const logout = await cli(['logout'], { env });
    expect([logout.code, await saved()]).toEqual([0, undefined]);
    const refresh = await api.call('POST', '/api/v1/auth/refresh', { cookie: `deployer_refresh=${rotated}` });
    expect(refresh.status).toBe(401);
    const after = await cli(['targets'], { env });
    expect([after.code, after.stderr]).toEqual([2, expect.stringContaining('run deployer login')]);
  });

  it('login with two-factor: the code is asked after the password', async () => {
    const { generate } = await import('otplib');
    await createUser('cli-2fa@example.com', 'twofa-password', ['user']);
    const { token } = await api.login({ email: 'cli-2fa@example.com', password: 'twofa-password' });
    const secret = (await api.call('POST', '/api/v1/auth/2fa/setup', { token })).json.secret as string;
    const step = Math.floor(Date.now() / 30_000);
    const enable = await api.call('POST', '/api/v1/auth/2fa/enable', {
      token,
      body: { code: await generate({ secret, epoch: step * 30 + 1 }) },
    });
    expect(enable.status).toBe(200);
    const env = { DEPLOYER_API_KEY: '', XDG_CONFIG_HOME: join(dir, 'twofa-config') };
    const noCode = await cli(['login', '--email', 'cli-2fa@example.com'], { env, input: 'twofa-password\n' });
    expect(noCode.code).toBe(3);
    const code = await generate({ secret, epoch: (step + 1) * 30 + 1 });
    const login = await cli(['login', '--email', 'cli-2fa@example.com'], { env, input: `twofa-password\n${code}\n` });
    expect([login.code, login.stderr]).toEqual([0, expect.stringContaining('Logged in to')]);
    expect((await cli(['queue', '-o', 'json'], { env })).code).toBe(0);
  });

  it('OAuth client credentials from DEPLOYER_CLIENT_ID / DEPLOYER_CLIENT_SECRET', async () => {
    const client = await call('POST', '/admin/oauth-clients', {
      name: 'cli-ci',
      grant_types: ['client_credentials'],
      scopes: ['targets:read'],
    });
    expect(client.status).toBe(201);
    const env = {
      DEPLOYER_API_KEY: '',
      DEPLOYER_CLIENT_ID: client.json.client_id,
      DEPLOYER_CLIENT_SECRET: client.json.client_secret,
    };
    const listed = await cli(['targets', '--tag', 'role=db', '-o', 'json'], { env });
    expect(JSON.parse(listed.stdout).map((t: { name: string }) => t.name)).toEqual(['local-2']);
    const wrong = await cli(['targets'], { env: { ...env, DEPLOYER_CLIENT_SECRET: 'dplcs_wrong' } });
    expect([wrong.code, wrong.stderr]).toEqual([3, expect.stringContaining('OAuth client credentials were refused')]);
  });

  it('serves /cli/deployer.mjs with its checksum, and install.sh installs it as the README pipeline step runs it', async () => {
    const served = Buffer.from(await (await fetch(`${e2e.stack.baseUrl}/cli/deployer.mjs`)).arrayBuffer());
    const sum = await (await fetch(`${e2e.stack.baseUrl}/cli/deployer.mjs.sha256`)).text();
    const hex = createHash('sha256').update(served).digest('hex');
    expect(sum).toBe(`${hex}  deployer.mjs\n`);
    expect(hex).toBe(e2e.stack.programs.cli?.sha256);
    expect(served.equals(await readFile(cliFile))).toBe(true);

    const slug = await action('echo from-the-pipeline');
    const bin = join(dir, 'bin');
    // The README's "Deploy from CI" step, word for word but for the action.
    const step = [
      'curl -fsSL "$DEPLOYER_URL/cli/install.sh" | sh -s -- --server "$DEPLOYER_URL" --bin-dir "$BIN"',
      `"$BIN/deployer" deploy --action ${slug} --tag role=web --wait`,
    ].join('\n');
    const shell = spawn('sh', ['-ec', step], {
      cwd: dir,
      env: {
        PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
        HOME: dir,
        BIN: bin,
        DEPLOYER_URL: e2e.stack.baseUrl,
        DEPLOYER_API_KEY: key,
      },
    });
    let out = '';
    shell.stdout.on('data', (c: Buffer) => (out += c.toString()));
    shell.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise((resolve) => shell.on('close', resolve));
    expect([code, out]).toEqual([0, expect.stringContaining('local-1 | from-the-pipeline')]);
    expect(out).toContain(`Installed deployer 1.0.0 to ${bin}/deployer`);
    expect(
      execFileSync(join(bin, 'deployer'), ['--version'], {
        encoding: 'utf8',
        env: { PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` },
      }),
    ).toBe('deployer 1.0.0\n');
  });
});
