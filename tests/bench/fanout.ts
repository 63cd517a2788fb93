// Benchmark (figures printed, nothing asserted): a one-command `parallel` deployment to N agents, from the create
// request to the terminal state. Run with `npm run bench:fanout [-- N [POLL_INTERVAL_MS]]` (default 100 agents and
// the service's AGENT_POLL_INTERVAL_MS, 500).
//
// N real agents (agent/agent.ts, the agent protocol over HTTP) run in k child processes (fanout-agents.ts, N/k each,
// FANOUT_AGENT_PROCESSES), each agent with its own state folder, all enrolled with one enrollment token and tagged bench=fanout. They share one loopback address, so this stack's
// general rate limit is raised. The deployment runs `echo ok` on every one of them; the client polls it every
// 100 ms. The timeline then splits the time with the server's own timestamps (same host clock):
//   create -> the engine marks each step running (its command stored, claimed for the agent's socket and pushed to
//             it; an agent without one is woken, or long-polls, and claims it over HTTP)
//          -> the agent runs it, reports completion with its output (the agent's completed_at is taken after any
//             output sent on its own was delivered) -> an engine pass per batch of completion messages finishes it.
// Everything (stack handlers in serverless-offline worker threads, the SQS pollers, the N agents) shares 2 cores
// on the development machine, so the figures are an upper bound of what the protocol itself costs; the CPU each
// round used is printed apart: the agents' processes, the shells their commands ran in (since 2026-11-29; before,
// a round's figures left them out), the stack's (DynamoDB Local, serverless-offline), this one.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startDynamo, startSqs, type Emulator } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack } from '../../local/stack.js';
import { Counter, difference, EMPTY_RECEIVE, startCountingProxy } from './aws-counter.js';
import { startAgentHost, type AgentHost, type RoundTraffic } from './fanout-agents.js';
import { printResults, type Figure } from './results.js';
import { runBench, signedIn, cpuSeconds } from './support.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const N = Number(process.argv[2] ?? 100);
if (!Number.isInteger(N) || N < 1 || N > 1000)
  throw new Error(`N must be a whole number from 1 to 1000 (got ${process.argv[2]})`);
/** How often a waiting long poll looks at its inbox (AGENT_POLL_INTERVAL_MS); the service's default unless given. */
const POLL_INTERVAL_MS = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
if (POLL_INTERVAL_MS !== undefined && !(Number.isInteger(POLL_INTERVAL_MS) && POLL_INTERVAL_MS >= 50))
  throw new Error(`the poll interval must be a whole number of ms >= 50 (got ${process.argv[3]})`);
/**
 * FANOUT_AGENT_PROCESSES: the child processes hosting the agents (fanout-agents.ts), each N/k of them; default one per
 * 125 agents, from 1 to 8.
 */
const AGENT_PROCESSES = Number(process.env['FANOUT_AGENT_PROCESSES'] ?? Math.min(8, Math.max(1, Math.ceil(N / 125))));
/** Past this, no more agents are started: the machine cannot carry N of them. */
const ENROLL_DEADLINE_MS = 240_000;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const TERMINAL = ['success', 'failed', 'cancelled', 'rolled_back'];
/**
 * FANOUT_COUNT_AWS=1: the stack's AWS calls go through the counting proxy of the cost benchmarks (aws-counter.ts) and
 * each round prints them by operation (per command too). The proxy runs in this process: timings are then not
 * comparable with an uncounted run; use it for the counts.
 */
const COUNT_AWS = process.env['FANOUT_COUNT_AWS'] === '1';
/** FANOUT_FIRST_BATCH_MS: the agents' hold on a command's first output batch (default agent/output.ts FIRST_BATCH_MS). */
const FIRST_BATCH_MS =
  process.env['FANOUT_FIRST_BATCH_MS'] === undefined ? undefined : Number(process.env['FANOUT_FIRST_BATCH_MS']);

const ms = (n: number) => (Number.isNaN(n) ? '-' : `${n.toFixed(0)} ms`).padStart(9);
const spread = (label: string, samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `   ${label.padEnd(44)} ${String(sorted.length).padStart(5)} ${ms(sorted[0] ?? NaN)} ${ms(percentile(sorted, 50))} ${ms(percentile(sorted, 95))} ${ms(sorted.at(-1) ?? NaN)}`;
};
const header = (title: string) =>
  `   ${title.padEnd(44)} ${'count'.padStart(5)} ${['min', 'p50', 'p95', 'max'].map((h) => h.padStart(9)).join(' ')}`;
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));
/** The resident memory of a process, from /proc (Linux); undefined elsewhere or once it is gone. */
const rssMiB = async (pid: number): Promise<number | undefined> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) / 1024;
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const main = async () => {
  const cores = cpus();
  console.log(
    `Fan-out: one \`echo ok\` command, target_mode parallel, to ${N} agents in ${AGENT_PROCESSES} child process(es) (long polls look at the inbox every ${POLL_INTERVAL_MS ?? 'default (500)'} ms)`,
  );
  console.log(
    `   machine: ${cores.length} cores (${cores[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} at start`,
  );
  let stack: Stack | undefined;
  const hosts: AgentHost[] = [];
  const figures: Figure[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-fanout-'));
  const agentProblems: string[] = [];
  let stopping: Promise<void> | undefined;
  const stopEverything = () =>
    (stopping ??= (async () => {
      await Promise.all(hosts.map((h) => h.stop()));
      await stack?.stop();
      await stopProxy?.();
      await Promise.all(emulators.map((e) => e.stop()));
      await rm(dir, { recursive: true, force: true });
    })());
  // Ctrl-C stops the agents and the stack (DynamoDB Local, serverless-offline) instead of leaving them behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(
      signal,
      () =>
        void stopEverything().finally(() => (console.log(`   ${signal}: agents and stack stopped`), process.exit(130))),
    );
  const counter = new Counter();
  const emulators: Emulator[] = [];
  let stopProxy: (() => Promise<void>) | undefined;
  try {
    if (COUNT_AWS) {
      const dynamo = await startDynamo({ port: await freePort() });
      const sqs = await startSqs({ port: await freePort() });
      emulators.push(dynamo, sqs);
      const proxy = await startCountingProxy(dynamo, sqs, counter);
      stopProxy = proxy.stop;
      process.env['AWS_ENDPOINT_URL'] = proxy.endpoint;
    }
    stack = await startStack({
      port: 0,
      namePrefix: `bench-fanout-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
      // N agents share one loopback address: the general limit (per address) would throttle their polls.
      env: {
        RATE_LIMIT_PER_SECOND: '10000',
        RATE_LIMIT_BURST: '20000',
        ...(POLL_INTERVAL_MS === undefined ? {} : { AGENT_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS) }),
      },
    });
    const { baseUrl, call } = await signedIn(stack, ADMIN);

    // Prepare: N agents in AGENT_PROCESSES children, enrolled with one token, each child 10 at a time
    const enrollment = (
      await call('POST', '/targets/enrollment-tokens', {
        expires_in_hours: 1,
        max_uses: N,
        tags: [{ key: 'bench', value: 'fanout' }],
      })
    ).token as string;
    const enrollStarted = Date.now();
    const enrolledBy = new Array<number>(AGENT_PROCESSES).fill(0);
    let lastProgress = 0;
    for (let k = 0; k < AGENT_PROCESSES; k++) {
      const first = Math.floor((k * N) / AGENT_PROCESSES);
      const next = Math.floor(((k + 1) * N) / AGENT_PROCESSES);
      const config = {
        server: baseUrl,
        enrollToken: enrollment,
        dir,
        first,
        count: next - first,
        ...(FIRST_BATCH_MS === undefined ? {} : { firstBatchMs: FIRST_BATCH_MS }),
      };
      hosts.push(
        startAgentHost(config, (count) => {
          enrolledBy[k] = count;
          if (Date.now() - lastProgress < 2000) return;
          lastProgress = Date.now();
          const sum = enrolledBy.reduce((x, y) => x + y, 0);
          console.log(
            `   ... ${sum} agents enrolled after ${((Date.now() - enrollStarted) / 1000).toFixed(1)} s (load ${loadavg()[0]!.toFixed(1)})`,
          );
        }),
      );
    }
    const readiness = await Promise.race([
      Promise.all(hosts.map((h) => h.ready)),
      sleep(ENROLL_DEADLINE_MS).then(() => undefined),
    ]);
    if (readiness === undefined)
      throw new Error(
        `only ${enrolledBy.reduce((x, y) => x + y, 0)} of ${N} agents enrolled within ${ENROLL_DEADLINE_MS / 1000} s (load ${loadavg()[0]!.toFixed(1)}): try a smaller N`,
      );
    for (const ready of readiness) agentProblems.push(...ready.problems);
    const enrolled = readiness.reduce((n, r) => n + r.enrolled, 0);
    const enrollMs = Date.now() - enrollStarted;
    let online = 0;
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(1000)) {
      const targets = (await call('GET', '/targets?tag=bench=fanout&status=online&limit=1')).meta.total as number;
      online = targets;
      if (online >= enrolled) break;
    }
    console.log(
      `   agents enrolled: ${enrolled} of ${N} in ${(enrollMs / 1000).toFixed(1)} s (${AGENT_PROCESSES} processes, 10 at a time each); online: ${online}`,
    );
    await sleep(5000); // every agent is in its long poll

    const action = await call('POST', '/actions', {
      slug: 'echo-ok',
      name: 'Echo ok',
      version: { version: '1.0.0', script: 'echo ok' },
    });
    if (typeof action.id !== 'string') throw new Error(`POST /actions answered ${JSON.stringify(action)}`);

    /** The stack's children, and the emulators when they run beside it (counting mode). */
    const stackProcesses = () => [
      ...(stack?.childPids ?? []),
      ...emulators.flatMap((e) => (e.pid === undefined ? [] : [e.pid])),
    ];
    const cpuOf = async (pids: readonly number[], whose: 'own' | 'children' = 'own') =>
      (await Promise.all(pids.map(async (pid) => (await cpuSeconds(pid))[whose]))).reduce((x, y) => x + y, 0);
    const cpuNow = async () => ({
      agents: await cpuOf(hosts.map((h) => h.pid)),
      shells: await cpuOf(
        hosts.map((h) => h.pid),
        'children',
      ),
      stack: await Promise.all(stackProcesses().map(async (pid) => (await cpuSeconds(pid)).own)),
      self: (await cpuSeconds(process.pid)).own,
    });
    const merged = (seen: readonly RoundTraffic[]) => {
      const durations = new Map<string, number[]>();
      for (const t of seen)
        for (const [kind, samples] of t.durations) durations.set(kind, [...(durations.get(kind) ?? []), ...samples]);
      return {
        durations,
        finishedIn: seen.flatMap((t) => t.finishedIn),
        traffic: seen.flatMap((t) => t.traffic),
        refusals: seen.flatMap((t) => t.refusals),
        problems: seen.flatMap((t) => t.problems),
      };
    };
    const trafficSeen = new Map<string, number>();
    const refusals: string[] = [];
    /** One deployment: create, poll it every 100 ms until it is terminal, print its timeline. */
    const round = async (label: string, kind: 'cold' | 'warm') => {
      // Act
      await Promise.all(hosts.map((h) => h.reset()));
      const cpuBefore = await cpuNow();
      const awsBefore = counter.snapshot();
      const kindsBefore = counter.snapshotKinds();
      const createdAt = Date.now();
      const created = await call('POST', '/deployments', {
        action_id: action.id,
        target_tags: [{ key: 'bench', value: 'fanout' }],
        target_mode: 'parallel',
      });
      const answeredAt = Date.now();
      const id = created.deployment_id as string;
      let deployment = created.deployment;
      let endedAt = NaN;
      // The round's calls and CPU are taken when the client sees the end: the reads this benchmark makes afterwards
      // (every command's result, the whole log history) are not the service's cost of the command. Its status
      // polls (one GET every 100 ms, 3 calls each) are counted.
      let awsAtEnd = counter.snapshot();
      let kindsAtEnd = counter.snapshotKinds();
      let cpuAfter = await cpuNow();
      /** How long each status poll took (a plan of N steps comes back whole with each one). */
      const polls: number[] = [];
      for (const until = createdAt + 300_000; Date.now() < until; await sleep(100)) {
        const polledAt = Date.now();
        deployment = await call('GET', `/deployments/${id}`);
        polls.push(Date.now() - polledAt);
        if (TERMINAL.includes(deployment.state)) {
          endedAt = Date.now();
          awsAtEnd = counter.snapshot();
          kindsAtEnd = counter.snapshotKinds();
          cpuAfter = await cpuNow();
          break;
        }
      }
      // Assess: the timeline, relative to the create request
      const steps = deployment.plan.steps as {
        state: string;
        started_at: string | null;
        completed_at: string | null;
        error_message: string | null;
      }[];
      const results = (await call('GET', `/deployments/${id}/analysis`)) as {
        status: string;
        started_at: string | null;
        completed_at: string | null;
      }[];
      // The history in pages of the spec's maximum (100 entries).
      const history: { event_type: string; timestamp: string }[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = (await call('GET', `/deployments/${id}/logs/history?offset=${offset}&limit=100`)) as {
          event_type: string;
          timestamp: string;
        }[];
        history.push(...page);
        if (page.length < 100) break;
      }
      const since = (iso: string | null) => (iso === null ? NaN : Date.parse(iso) - createdAt);
      const times = (values: readonly (string | null)[]) => values.map(since).filter((n) => !Number.isNaN(n));
      const states = (items: readonly { state?: string; status?: string }[]) =>
        Object.entries(
          items.reduce<Record<string, number>>(
            (counts, s) => ({ ...counts, [s.state ?? s.status ?? '?']: (counts[s.state ?? s.status ?? '?'] ?? 0) + 1 }),
            {},
          ),
        )
          .map(([state, count]) => `${count} ${state}`)
          .join(', ');
      console.log(
        `\n   ${label}: deployment ${deployment.state}, ${steps.length} steps (${states(steps)}); commands: ${states(results)}`,
      );
      const errors = new Map<string, number>();
      for (const step of steps)
        if (step.error_message !== null) errors.set(step.error_message, (errors.get(step.error_message) ?? 0) + 1);
      for (const [message, count] of errors) console.log(`   ${count} step(s) failed: ${message}`);
      const total = Number.isNaN(endedAt)
        ? 'not terminal within 300 s'
        : `${((endedAt - createdAt) / 1000).toFixed(2)} s`;
      console.log(
        `   TOTAL, create request sent -> terminal state seen by the client: ${total} (server duration_ms ${deployment.duration_ms ?? '-'})`,
      );
      figures.push(
        {
          bench: 'fanout',
          name: `${N} agents: create -> terminal, ${kind}`,
          value: Number.isNaN(endedAt) ? 300 : (endedAt - createdAt) / 1000,
          unit: 's',
          goal: N === 100 ? '1.5 s' : N === 1000 ? '10 s' : '',
        },
        {
          bench: 'fanout',
          name: `${N} agents: steps not completed, ${kind}`,
          value: steps.filter((step) => step.state !== 'completed').length,
          unit: 'count',
          goal: '0',
        },
      );
      console.log(header('after the create request was sent'));
      console.log(spread('create answered (201)', [answeredAt - createdAt]));
      console.log(spread('deployment started_at (instance taken)', times([deployment.started_at])));
      console.log(spread('step marked running (command in the inbox)', times(steps.map((s) => s.started_at))));
      console.log(spread('command started on its agent', times(results.map((r) => r.started_at))));
      console.log(
        spread(
          'its output line stored (log event)',
          times(history.filter((e) => e.event_type === 'log').map((e) => e.timestamp)),
        ),
      );
      console.log(spread('command done on its agent, output delivered', times(results.map((r) => r.completed_at))));
      console.log(spread('step completed (engine pass after complete)', times(steps.map((s) => s.completed_at))));
      console.log(spread('deployment completed_at', times([deployment.completed_at])));
      const seen = merged(await Promise.all(hosts.map((h) => h.collect())));
      trafficSeen.clear(); // each child counts since its start: the sum over the children is the total so far
      for (const [kind, count] of seen.traffic) trafficSeen.set(kind, (trafficSeen.get(kind) ?? 0) + count);
      refusals.push(...seen.refusals);
      agentProblems.push(...seen.problems);
      console.log(spread('agent: started -> finished (its log line)', seen.finishedIn));
      console.log(spread('client: status poll (GET, whole plan)', polls));
      console.log(header('agent requests during the round, duration'));
      for (const [kind, samples] of [...seen.durations].sort()) console.log(spread(kind, samples));
      if (COUNT_AWS) {
        const calls = [...difference(awsAtEnd, awsBefore)].sort(([a], [b]) => a.localeCompare(b));
        const all = calls.reduce((n, [, t]) => n + t.calls, 0);
        const idle = calls.find(([operation]) => operation === EMPTY_RECEIVE)?.[1].calls ?? 0;
        const total = all - idle;
        figures.push({
          bench: 'fanout',
          name: `${N} agents: AWS calls per command, ${kind}`,
          value: total / N,
          unit: 'count',
          goal: '5',
        });
        console.log(
          `   AWS calls in the round, create -> end seen (through the counting proxy): ${all}; ${total}, ${(total / N).toFixed(2)} per command, without the ${idle} empty receives of the local queue pollers (an empty queue is asked again at its next send, or after a second)`,
        );
        for (const [operation, tally] of calls)
          console.log(
            `     ${operation.padEnd(32)} ${String(tally.calls).padStart(6)} ${(tally.calls / N).toFixed(2).padStart(7)}/command  WRU ${tally.wru.toFixed(0)}  RRU ${tally.rru.toFixed(0)}`,
          );
        // Where the DynamoDB calls go, by the kind of record (its partition key's prefix): what to cut next.
        console.log('   DynamoDB calls by record kind (at least 0.05 per command):');
        for (const [kind, tally] of [...difference(kindsAtEnd, kindsBefore)].sort(([, a], [, b]) => b.calls - a.calls))
          if (tally.calls / N >= 0.05)
            console.log(
              `     ${kind.padEnd(44)} ${String(tally.calls).padStart(6)} ${(tally.calls / N).toFixed(2).padStart(7)}/command`,
            );
      }
      const stackCpu = cpuAfter.stack.map((c, i) => c - cpuBefore.stack[i]!);
      const serverCpu = stackCpu.reduce((x, y) => x + y, 0);
      const agentsCpu = cpuAfter.agents - cpuBefore.agents;
      const shellsCpu = cpuAfter.shells - cpuBefore.shells;
      console.log(
        `   CPU seconds used in the round: agents (${AGENT_PROCESSES} processes) ${agentsCpu.toFixed(1)}, ` +
          `the shells their commands ran in ${shellsCpu.toFixed(1)}; ` +
          `stack ${serverCpu.toFixed(1)} (${stackCpu.map((c) => c.toFixed(1)).join(', ')}: ${COUNT_AWS ? 'serverless-offline with the functions, then the emulators' : 'DynamoDB Local, serverless-offline with the functions'}); ` +
          `this process (client${COUNT_AWS ? ', counting proxy' : ''}) ${(cpuAfter.self - cpuBefore.self).toFixed(1)}`,
      );
      console.log(
        `   per command: agents ${((agentsCpu * 1000) / N).toFixed(1)} ms CPU (their shells ${((shellsCpu * 1000) / N).toFixed(1)} ms more), stack ${((serverCpu * 1000) / N).toFixed(1)} ms CPU`,
      );
      figures.push({
        bench: 'fanout',
        name: `${N} agents: server CPU per command (stack processes), ${kind}`,
        value: (serverCpu * 1000) / N,
        unit: 'ms',
        goal: '10 ms',
      });
    };
    // The first round also pays serverless-offline's cold starts: a worker thread per concurrent request, so the
    // agents' output and complete calls (beside their N open long polls) each start one. The second runs warm.
    await round('round 1 (cold: new serverless-offline worker threads)', 'cold');
    await sleep(3000);
    await round('round 2 (warm)', 'warm');

    const offlineRss = await Promise.all(stack.childPids.map(rssMiB));
    const children = offlineRss.map((r) => (r === undefined ? '?' : `${r.toFixed(0)} MiB`)).join(', ');
    console.log(
      `\n   resident memory: this process ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB; ` +
        `stack children ${children} (DynamoDB Local, serverless-offline with the functions)`,
    );
    console.log(
      `   agent requests by kind and status: ${[...trafficSeen]
        .sort()
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}`,
    );
    if (refusals.length > 0) console.log(`   first refusals: ${refusals.join('; ')}`);
    console.log(
      `   load average at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await stopEverything();
    if (agentProblems.length > 0)
      console.log(
        `   agent log lines about problems: ${agentProblems.length}, e.g.\n     ${agentProblems.slice(0, 5).join('\n     ')}`,
      );
    const left = (stack?.childPids ?? []).filter(alive);
    console.log(`   stopped; child processes left: ${left.length === 0 ? 'none' : left.join(', ')}`);
  }
  printResults(figures);
};

await runBench(main);
