// Benchmark (figures printed, nothing asserted): the time from an orchestration instance being freed to the next
// pending request running. Run with `npm run bench:dispatch [-- K]` (default 10 hand-overs).
//
// Capacity 1; a deployment runs `sleep 60` on local-1 and K more wait as pending requests. Then, K times: cancel
// the running one (its cancel transaction frees the instance and wakes the dispatcher through the dispatch queue)
// and poll GET /deployments?status=running every 25 ms until the next deployment shows up (the dispatcher's start
// transaction stores it already `running`), then its detail until its step is running (the execution engine's
// first pass, woken through the orchestrator queue, put its command in local-1's inbox). The path: cancel -> SQS
// message -> the local poller (short polls, 50 ms idle pause, local/poller.ts) -> dispatcher -> start transaction
// -> orchestrator message -> engine pass -> the agent's long poll (the inbox is looked at every 500 ms).
// Client-side figures include the polling period and one request (tens of ms here); the server's own timestamps
// (from the cancelled deployment's completed_at, written as the instance is freed) exclude them.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { runBench, signedIn } from './support.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const K = Number(process.argv[2] ?? 10);
if (!Number.isInteger(K) || K < 1 || K > 100)
  throw new Error(`K must be a whole number from 1 to 100 (got ${process.argv[2]})`);
const POLL_MS = 25;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };

const ms = (n: number) => (Number.isNaN(n) ? '-' : `${n.toFixed(0)} ms`).padStart(9);
const row = (label: string, samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `   ${label.padEnd(50)} ${String(sorted.length).padStart(5)} ${ms(sorted[0] ?? NaN)} ${ms(percentile(sorted, 50))} ${ms(percentile(sorted, 95))} ${ms(sorted.at(-1) ?? NaN)}`;
};
const header = (title: string) =>
  `   ${title.padEnd(50)} ${'count'.padStart(5)} ${['min', 'p50', 'p95', 'max'].map((h) => h.padStart(9)).join(' ')}`;
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface ListedDeployment {
  readonly id: string;
  readonly state: string;
  readonly started_at: string | null;
  readonly completed_at: string | null;
}

const main = async () => {
  console.log(
    `Dispatch latency: capacity 1, ${K} hand-overs from a cancelled deployment to the next waiting one (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  let stack: Stack | undefined;
  let agents: readonly LocalAgent[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-dispatch-'));
  let stopping: Promise<void> | undefined;
  const stopEverything = () =>
    (stopping ??= (async () => {
      await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
      await stack?.stop();
      await rm(dir, { recursive: true, force: true });
    })());
  // Ctrl-C stops the agents and the stack (DynamoDB Local, serverless-offline) instead of leaving them behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(
      signal,
      () =>
        void stopEverything().finally(() => (console.log(`   ${signal}: agents and stack stopped`), process.exit(130))),
    );
  try {
    stack = await startStack({
      port: 0,
      namePrefix: `bench-dispatch-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
    });
    const { call } = await signedIn(stack, ADMIN);
    const active = async (): Promise<ListedDeployment[]> =>
      (await call('GET', '/deployments?status=running&limit=100')).data;
    agents = await startLocalAgents(stack, dir, () => undefined);

    // Prepare: capacity 1, one deployment running `sleep 60`, K waiting
    await call('PUT', '/admin/orchestration', { instances: 1 });
    const action = await call('POST', '/actions', {
      slug: 'sleep-60',
      name: 'Sleep 60',
      version: { version: '1.0.0', script: 'sleep 60' },
    });
    if (typeof action.id !== 'string') throw new Error(`POST /actions answered ${JSON.stringify(action)}`);
    const body = { action_id: action.id, target_tags: [{ key: 'role', value: 'web' }] };
    const first = await call('POST', '/deployments', body);
    if (first.pending !== false) throw new Error(`the first deployment did not start: ${JSON.stringify(first)}`);
    let running = first.deployment_id as string;
    for (let i = 0; i < K; i += 1) {
      const queued = await call('POST', '/deployments', body);
      if (queued.pending !== true) throw new Error(`deployment ${i + 2} was not queued: ${JSON.stringify(queued)}`);
    }
    for (
      const until = Date.now() + 30_000;
      (await call('GET', `/deployments/${running}`)).state !== 'running';
      await sleep(200)
    ) {
      if (Date.now() > until) throw new Error('the first deployment never ran');
    }

    // Act: K hand-overs
    const cancelMs: number[] = [];
    const toListed: number[] = [];
    const toStepRunning: number[] = [];
    const handOvers: { readonly freedAt: number; readonly next: string }[] = [];
    for (let i = 0; i < K; i += 1) {
      await sleep(1000); // the previous hand-over's engine pass and the agent's pickup are over
      const sent = Date.now();
      const cancelled = (await call('POST', `/deployments/${running}/cancel`, {
        reason: 'benchmark hand-over',
      })) as ListedDeployment;
      const answered = Date.now();
      let next: ListedDeployment | undefined;
      for (const until = answered + 60_000; next === undefined && Date.now() < until; await sleep(POLL_MS)) {
        next = (await active()).find((d) => d.id !== running);
      }
      if (next === undefined) throw new Error(`hand-over ${i + 1}: no next deployment within 60 s`);
      const listedAt = Date.now();
      for (
        const until = listedAt + 60_000;
        (await call('GET', `/deployments/${next.id}`)).plan.steps[0]?.state !== 'running';
        await sleep(POLL_MS)
      ) {
        if (Date.now() > until) throw new Error(`hand-over ${i + 1}: the step of ${next.id} never ran`);
      }
      cancelMs.push(answered - sent);
      toListed.push(listedAt - answered);
      toStepRunning.push(Date.now() - answered);
      handOvers.push({ freedAt: Date.parse(cancelled.completed_at ?? ''), next: next.id });
      running = next.id;
    }
    await sleep(1000);
    await call('POST', `/deployments/${running}/cancel`, { reason: 'benchmark over' });

    // The server's own timestamps, from the moment the cancel freed the instance (the cancelled deployment's
    // completed_at, written in the same transaction)
    const started: number[] = [];
    const stepStarted: number[] = [];
    const agentStarted: number[] = [];
    for (const { freedAt, next } of handOvers) {
      const detail = await call('GET', `/deployments/${next}`);
      const [result] = (await call('GET', `/deployments/${next}/analysis`)) as { started_at: string | null }[];
      started.push(Date.parse(detail.started_at) - freedAt);
      stepStarted.push(Date.parse(detail.plan.steps[0]?.started_at ?? '') - freedAt);
      if (result?.started_at != null) agentStarted.push(Date.parse(result.started_at) - freedAt);
    }

    // Assess
    console.log(`\n${header(`client, after the cancel answered (polls ${POLL_MS} ms)`)}`);
    console.log(row('cancel request itself (sent -> answered)', cancelMs));
    console.log(row('next deployment listed as running (dispatched)', toListed));
    console.log(row('its step running (engine pass; GET detail)', toStepRunning));
    console.log(`\n${header('server timestamps, after the instance was freed')}`);
    console.log(row('next deployment started_at (dispatcher)', started));
    console.log(row('its step started_at (engine: command queued)', stepStarted));
    console.log(row('its command started on the agent (analysis)', agentStarted));
    const orchestration = await call('GET', '/admin/orchestration');
    console.log(
      `   afterwards: instances ${orchestration.instances}, in use ${orchestration.in_use}, pending ${JSON.stringify(orchestration.pending)}`,
    );
  } finally {
    await stopEverything();
    const left = (stack?.childPids ?? []).filter(alive);
    console.log(`   stopped; child processes left: ${left.length === 0 ? 'none' : left.join(', ')}`);
  }
};

await runBench(main);
