// `npm start` as a user runs it, in its own process group like a terminal's foreground job: a Ctrl-C (SIGINT to
// the whole group), or a SIGTERM to the whole group (what a CI runner or a process manager sends), while a command
// runs stops the agents first (the command gets its grace period and its completion still reaches the service),
// then the functions, then the emulators, and exits within seconds.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/ports.js';
import { ROOT } from '../../local/service-definition.js';
import { LOCAL_IDP_NAME } from '../../local/local-idp.js';
import { browser } from '../support/browser.js';
import { apiClient } from '../support/http.js';

let child: ChildProcess | undefined;
let output = '';

afterAll(() => {
  if (child?.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
});

const waitFor = async (what: string, check: () => boolean | Promise<boolean>, withinMs: number) => {
  const until = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; output so far:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('npm start', () => {
  it('prints usage for --help and refuses an unknown flag with exit code 2', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'local', 'start.ts'), ...args], { cwd: ROOT });
        let out = '';
        p.stdout.on('data', (c: Buffer) => (out += c.toString()));
        p.stderr.on('data', (c: Buffer) => (out += c.toString()));
        p.on('exit', (code) => resolve({ code, out }));
      });
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: npm start');
    const unknown = await run(['--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain("Unknown option '--bogus'");
    expect(unknown.out).not.toMatch(/\n\s+at /); // no stack trace
  }, 60_000);

  it.each([
    ['Ctrl-C (SIGINT)', 'SIGINT'],
    ['SIGTERM to the process group', 'SIGTERM'],
  ] as const)(
    'stops in order on %s with a command running, and exits within seconds',
    async (_name, signal) => {
      // Prepare: npm start in memory on a free port, as the leader of its own process group
      output = '';
      const port = await freePort();
      // As package.json's `start` runs it: node with tsx's loader, no wrapper process between the signal and start.ts
      // (tsx's CLI wrapper SIGKILLs its child when the child does not confirm a relayed signal within 60 ms, as a
      // loaded machine can make it: an exit 130 without the orderly stop).
      child = spawn(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'local', 'start.ts'), '--in-memory', '--port', String(port)],
        {
          cwd: ROOT,
          detached: true,
          // INFO: the functions' access lines, to see the running command's completion reach them on the way down
          env: {
            ...process.env,
            BOOTSTRAP_ADMIN_EMAIL: 'admin@example.com',
            BOOTSTRAP_ADMIN_PASSWORD: 'admin-password',
            POWERTOOLS_LOG_LEVEL: 'INFO',
          },
        },
      );
      child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      await waitFor('the ready banner', () => output.includes('Deployment service ready'), 120_000);
      // One line per start-up step, with its time
      for (const step of [
        'SQS emulator (local-aws-sqs)',
        'DynamoDB Local',
        'HTTP functions (serverless-offline)',
        'tables (1)',
        'first admin',
        'agents (2)',
      ]) {
        expect(output).toMatch(new RegExp(`^  ${step.replace(/[()-]/g, '\\$&')}\\.+ \\d+\\.\\d s$`, 'm'));
      }
      // Every function was loaded before the banner (not by a user's first request)
      expect(output).toMatch(/^  functions warmed \(\d+\)\.+ \d+\.\d s$/m);
      expect(output.indexOf('functions warmed')).toBeLessThan(output.indexOf('Deployment service ready'));
      const dynamoPort = Number(/DynamoDB\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
      expect(await listening(dynamoPort)).toBe(true);

      const api = apiClient(() => `http://localhost:${port}`);
      const token = (await api.login({ email: 'admin@example.com', password: 'admin-password' })).token;
      const call = (method: string, path: string, body?: unknown) =>
        api.call(method, `/api/v1${path}`, { token, body });
      const action = await call('POST', '/actions', {
        slug: 'long',
        name: 'Long',
        version: { version: '1.0.0', script: 'echo started; sleep 60' },
      });
      const created = await call('POST', '/deployments', {
        action_id: action.json.id,
        target_tags: [{ key: 'role', value: 'web' }],
      });
      expect(created.status).toBe(201);
      await waitFor(
        'the command to run',
        async () =>
          (await call('GET', `/deployments/${created.json.deployment_id}/logs/history`)).json.some?.(
            (e: { message: string }) => e.message === 'started',
          ) === true,
        30_000,
      );

      // Act: the signal to the whole process group (a terminal's Ctrl-C: SIGINT; a CI runner or process manager: SIGTERM)
      const sent = Date.now();
      const signalledAt = output.length;
      process.kill(-child.pid!, signal);
      const code = await exited;
      const took = Date.now() - sent;
      console.log(`npm start stopped ${took} ms after ${signal}`);
      const afterSignal = output.slice(signalledAt);

      // Assess: a clean exit within the grace period plus a few seconds, nothing failing to reach the emulators
      expect(code).toBe(0);
      expect(took).toBeLessThan(10_000); // the bound: 5 s of grace for the running command, then the rest in order
      expect(output).toContain('Stopped.');
      expect(output).not.toMatch(/DATABASE_CONNECTION_ERROR|ECONNREFUSED|cannot reach the server/);
      expect(output).not.toMatch(/-> 5\d\d \(/); // no request answered 500 (or any 5xx) on the way down
      // In order: the agents first; the running command's completion still reaches the functions (so they were still
      // up); then "Stopped." once the functions and emulators are down
      const stopping = afterSignal.indexOf(`${signal}: stopping the agents`);
      const completion = afterSignal.search(/POST \/api\/v1\/agent\/commands\/[^ ]+\/complete -> 2\d\d/);
      expect([stopping, completion]).toEqual([expect.any(Number), expect.any(Number)]);
      expect(stopping).toBeGreaterThan(-1);
      expect(afterSignal.indexOf('[local-1] stopped')).toBeGreaterThan(stopping);
      expect(completion).toBeGreaterThan(stopping);
      expect(afterSignal.indexOf('Stopped.')).toBeGreaterThan(completion);
      expect(await listening(dynamoPort)).toBe(false);
      expect(await listening(port)).toBe(false);
    },
    240_000,
  ); // a whole `npm start` boots here: DynamoDB Local, serverless-offline, the agents

  it('--with-idp: a local OpenID provider registered as "Local SSO"; alice signs in through it over HTTP and holds operator; rotate-keys says an in-memory stack has nothing to rotate', async () => {
    // Prepare: npm start in memory with the local provider
    output = '';
    const port = await freePort();
    child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'local', 'start.ts'), '--in-memory', '--with-idp', '--port', String(port)],
      {
        cwd: ROOT,
        detached: true,
        env: { ...process.env, BOOTSTRAP_ADMIN_EMAIL: 'admin@example.com', BOOTSTRAP_ADMIN_PASSWORD: 'admin-password' },
      },
    );
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    await waitFor('the ready banner', () => output.includes('Deployment service ready'), 120_000);
    // The banner says how to try it: the button, the users, their passwords and what their groups grant
    expect(output).toMatch(/^  Local SSO \(OpenID provider\)\.+ \d+\.\d s$/m);
    expect(output).toContain(`choose "Sign in with ${LOCAL_IDP_NAME}"`);
    expect(output).toMatch(/alice@example\.com \/ alice-password\s+\(deployers -> operator\)/);
    expect(output).toMatch(/bob@example\.com \/ bob-password\s+\(admins -> admin\)/);
    const api = apiClient(() => `http://localhost:${port}`);
    const b = browser(() => `http://localhost:${port}`);

    // Act: the sign-in page's list offers it; the browser goes to the provider, fills its form, comes back
    const offered = await api.call('GET', '/api/v1/auth/sso', {});
    const local = (offered.json.data as { id: string; name: string }[]).find((p) => p.name === LOCAL_IDP_NAME);
    expect(local).toBeDefined();
    const start = await b.visit(`/api/v1/auth/sso/${local!.id}`);
    expect(start.status).toBe(302);
    const form = await b.visit(start.location!);
    expect([form.status, form.text]).toEqual([200, expect.stringContaining('<label for="password">Password</label>')]);
    const authorize = new URL(start.location!);
    const fields = Object.fromEntries(authorize.searchParams);
    const wrong = await b.visit(`${authorize.origin}${authorize.pathname}`, {
      form: { ...fields, email: 'alice@example.com', password: 'not-her-password' },
    });
    expect([wrong.status, wrong.text]).toEqual([401, expect.stringContaining('Wrong email or password')]);
    const signedIn = await b.visit(`${authorize.origin}${authorize.pathname}`, {
      form: { ...fields, email: 'alice@example.com', password: 'alice-password' },
    });
    expect(signedIn.status).toBe(302);
    const callback = await b.visit(signedIn.location!);

    // Assess: a session for a new account, alice, holding operator through the deployers mapping
    expect(callback.status).toBe(303);
    const refresh = await api.call('POST', '/api/v1/auth/refresh', {
      cookie: `deployer_refresh=${b.cookie('deployer_refresh')}`,
    });
    expect(refresh.status).toBe(200);
    const me = await api.call('GET', '/api/v1/auth/me', { token: refresh.json.access_token });
    expect([me.json.email, me.json.roles]).toEqual(['alice@example.com', ['operator']]);
    expect(me.json.permissions).toContain('deployments:create');
    expect(me.json.permissions).not.toContain('users:read');

    // Papercuts: `npm run rotate-keys` says an in-memory stack has nothing to rotate (not "No running stack found");
    // serverless-offline's `received connection` (an agent opening its socket) is not shown
    const rotate = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'local', 'rotate-keys.ts')], { cwd: ROOT });
      let out = '';
      p.stdout.on('data', (c: Buffer) => (out += c.toString()));
      p.stderr.on('data', (c: Buffer) => (out += c.toString()));
      p.on('exit', (code) => resolve({ code, out }));
    });
    expect(rotate.out).toContain(
      `The running stack is in memory (npm start -- --in-memory: pid ${child.pid}, port ${port})`,
    );
    expect(rotate.out).toContain('nothing to rotate');
    expect(rotate.out).not.toContain('No running stack found');
    expect(rotate.code).toBe(3);
    expect(output).not.toContain('received connection');

    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(0);
  }, 240_000);
});
