// Crash safety: a stack on persistent data (a directory this test owns), a real agent, orchestration capacity 1, one
// deployment running a long command and two waiting in the queue. The whole stack is SIGKILLed (its process group:
// DynamoDB Local, serverless-offline, the pollers, the agents and the command) in the middle of the command, then
// started again on the same data. Then: the running deployment ends failed with a clear reason, each queued one runs
// exactly once (each script appends a line to its own file), and the orchestration instance is free again.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/ports.js';
import { ROOT } from '../../local/service-definition.js';
import { uniqueName } from '../support/aws.js';
import { apiClient } from '../support/http.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password' };
const TERMINAL = ['success', 'failed', 'cancelled', 'rolled_back'];
let dir: string | undefined;
let child: ChildProcess | undefined;
let output = '';

const killGroup = (signal: NodeJS.Signals) => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  }
};

/** Starts tests/support/crash-stack.ts as the leader of its own process group; its base URL once ready. */
const startLife = async (args: string[]): Promise<string> => {
  output = '';
  child = spawn(
    process.execPath,
    [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'tests', 'support', 'crash-stack.ts'), ...args],
    { cwd: ROOT, detached: true, env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'WARN' } },
  );
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const until = Date.now() + 150_000;
  while (!/READY (\S+)/.test(output)) {
    if (Date.now() > until || child.exitCode !== null) throw new Error(`the stack did not start; output:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return /READY (\S+)/.exec(output)![1]!;
};

let last: unknown;
const waitFor = async <T>(what: string, check: () => Promise<T | undefined>, withinMs: number): Promise<T> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until)
      throw new Error(
        `timed out waiting for ${what}; last seen: ${JSON.stringify(last)}; stack output:\n${output.slice(-4000)}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
};

/** Processes of a group still running (zombies, which some container inits reap late, do not count). */
const liveMembers = async (pgid: number): Promise<number> => {
  let live = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') live += 1;
  }
  return live;
};

const lines = async (file: string): Promise<string[]> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

afterAll(async () => {
  killGroup('SIGKILL');
  if (dir !== undefined) {
    // The long command's own process group outlives the SIGKILL of the stack's (the agent starts each command in
    // a group of its own): end it too.
    const pid = Number((await readFile(join(dir, 'long.pid'), 'utf8').catch(() => '')).trim());
    if (pid > 0) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
});

describe('a SIGKILL of the whole stack mid-command, then a restart on the same data', () => {
  it(
    'fails the running deployment with a reason, runs each queued one exactly once, and frees the instance',
    { timeout: 400_000 },
    async () => {
      // Prepare: a first life with capacity 1, one long deployment running, two waiting
      dir = await mkdtemp(join(tmpdir(), 'deployer-crash-'));
      const args = [
        dir,
        String(await freePort()),
        String(await freePort()),
        String(await freePort()),
        `${uniqueName('crash')}-`,
      ];
      let baseUrl = await startLife(args);
      const api = apiClient(() => baseUrl);
      let token = (await api.login(ADMIN)).token;
      const call = (method: string, path: string, body?: unknown) =>
        api.call(method, `/api/v1${path}`, { token, body });
      const action = async (slug: string, script: string) =>
        (await call('POST', '/actions', { slug, name: slug, version: { version: '1.0.0', script } })).json.id as string;
      const long = await action(
        'crash-long',
        `echo $$ > ${join(dir, 'long.pid')}; echo started >> ${join(dir, 'long.runs')}; echo started; sleep 300; echo finished >> ${join(dir, 'long.runs')}`,
      );
      const first = await action('crash-q1', `echo run >> ${join(dir, 'q1.runs')}`);
      const second = await action('crash-q2', `echo run >> ${join(dir, 'q2.runs')}`);
      expect((await call('PUT', '/admin/orchestration', { instances: 1 })).status).toBe(200);
      const deploy = (actionId: string) =>
        call('POST', '/deployments', { action_id: actionId, target_tags: [{ key: 'role', value: 'web' }] });
      const running = await deploy(long);
      expect(running.status).toBe(201);
      const runningId = running.json.deployment_id as string;
      await waitFor(
        'the long command to start',
        async () => ((await lines(join(dir!, 'long.runs'))).length > 0 ? true : undefined),
        60_000,
      );
      const queued = [await deploy(first), await deploy(second)];
      for (const reply of queued) expect([reply.status, reply.json.pending]).toEqual([202, true]);
      const requestIds = queued.map((reply) => reply.json.pending_request_id as string);

      // Act: SIGKILL the whole process group mid-command, then start again on the same data
      killGroup('SIGKILL');
      await new Promise<void>((resolve) =>
        child!.exitCode !== null || child!.signalCode !== null ? resolve() : child!.once('exit', () => resolve()),
      );
      baseUrl = await startLife(args);
      token = (await api.login(ADMIN)).token;

      // Assess: the running deployment fails with a clear reason
      const failed = await waitFor(
        'the interrupted deployment to end',
        async () => {
          const d = (await call('GET', `/deployments/${runningId}`)).json;
          last = d;
          return TERMINAL.includes(d.state) ? d : undefined;
        },
        90_000,
      );
      expect(failed.state).toBe('failed');
      expect(failed.plan.steps).toEqual([
        expect.objectContaining({
          state: 'failed',
          exit_code: -1,
          error_message: 'The agent restarted while the command was running',
        }),
      ]);
      // its history ends once (issue 34): one terminal state_change, and its entries' times follow their order
      const endsOf = async () => {
        const history = (await call('GET', `/deployments/${runningId}/logs/history?limit=100`)).json as {
          id: number;
          timestamp: string;
          event_type: string;
          metadata: { new_state?: string } | null;
        }[];
        for (let i = 1; i < history.length; i += 1)
          expect(
            Date.parse(history[i]!.timestamp),
            JSON.stringify(history.slice(Math.max(0, i - 2), i + 2)),
          ).toBeGreaterThanOrEqual(Date.parse(history[i - 1]!.timestamp));
        return history.filter(
          (e) => e.event_type === 'state_change' && TERMINAL.includes(String(e.metadata?.new_state)),
        );
      };
      expect(await endsOf()).toHaveLength(1);
      // each queued one is dispatched and runs once
      const deploymentIds = await waitFor(
        'both queued requests to be dispatched',
        async () => {
          const pending = (await call('GET', '/deployments/pending')).json as {
            id: string;
            status: string;
            deployment_id?: string;
          }[];
          const found = requestIds.map((id) => pending.find((r) => r.id === id));
          return found.every((r) => r?.status === 'dispatched' && r.deployment_id !== undefined)
            ? found.map((r) => r!.deployment_id!)
            : undefined;
        },
        120_000,
      );
      for (const id of deploymentIds) {
        const done = await waitFor(
          `deployment ${id} to end`,
          async () => {
            const d = (await call('GET', `/deployments/${id}`)).json;
            return TERMINAL.includes(d.state) ? d : undefined;
          },
          90_000,
        );
        expect([id, done.state]).toEqual([id, 'success']);
      }
      // a few sweeps later, still once each (a second run would append a second line)
      await new Promise((r) => setTimeout(r, 5_000));
      expect(await lines(join(dir, 'q1.runs'))).toEqual(['run']);
      expect(await lines(join(dir, 'q2.runs'))).toEqual(['run']);
      // and the interrupted one still ended once after those sweeps and passes
      expect(await endsOf()).toHaveLength(1);
      // Never started again by the restart, and not left running: the command's own process group outlived the
      // SIGKILL of the stack's group, and the restarted agent ended it before reporting the command lost.
      expect(await lines(join(dir, 'long.runs'))).toEqual(['started']);
      const longPid = Number((await readFile(join(dir, 'long.pid'), 'utf8')).trim());
      expect(await liveMembers(longPid)).toBe(0);
      // the instance is free
      const orchestration = (await call('GET', '/admin/orchestration')).json;
      expect(orchestration).toMatchObject({ instances: 1, in_use: 0, available: 1, holders: [], pending: 0 });
      expect((await call('GET', '/health')).status).toBe(200);
    },
  );
});
