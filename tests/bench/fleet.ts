// Benchmark (figures printed, nothing asserted): what an idle fleet does to the service, and how fast a queued
// command starts on an online agent. Run with `npm run bench:fleet [-- N [--transport websocket|polling]]`
// (default 100 agents over the WebSocket).
//
// 1. GET /api/v1/health latency (p50/p95/p99 of 300 sequential requests) with 2 idle agents, then with N.
// 2. Push latency: K commands queued one at a time for one online, idle agent (through the domain's enqueue, as
//    the engine queues them); the time from the command's creation to the agent's `started_at` (both on this
//    host's clock), and to the completion stored on the server.
// Everything (the stack's functions in serverless-offline workers, the SQS pollers, the N agents in this process)
// shares the machine's cores.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startAgent, type RunningAgent } from '../../agent/agent.js';
import { enqueueCommand } from '../../domain/targets/commands.js';
import { startStack, type Stack } from '../../local/stack.js';
import { runBench, signedIn } from './support.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { transport: { type: 'string', default: 'websocket' } },
});
const N = Number(positionals[0] ?? 100);
const TRANSPORT = options.transport as 'websocket' | 'polling';
if (!Number.isInteger(N) || N < 2 || N > 300) throw new Error('N must be 2 to 300');
const K = 50;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));
const summary = (samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(1)} ms`;
  return `p50 ${f(percentile(sorted, 50))}  p95 ${f(percentile(sorted, 95))}  p99 ${f(percentile(sorted, 99))}  max ${f(sorted.at(-1) ?? NaN)}  (n=${sorted.length})`;
};

const main = async () => {
  console.log(`An idle fleet of ${N} agents over ${TRANSPORT} (machine: ${cpus().length} cores)`);
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-fleet-'));
  let stack: Stack | undefined;
  const agents: RunningAgent[] = [];
  try {
    stack = await startStack({
      port: 0,
      namePrefix: `bench-fleet-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
      env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '20000' },
    });
    const { baseUrl, call } = await signedIn(stack, ADMIN);
    const token = (await call('POST', '/targets/enrollment-tokens', { expires_in_hours: 1, max_uses: N })).token;
    const enroll = async (count: number) => {
      for (let i = 0; i < count; i += 10) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(10, count - i) }, () => {
            const n = agents.length + 1 + Math.floor(Math.random() * 1e6);
            return startAgent({
              server: baseUrl,
              name: `fleet-${n}`,
              enrollToken: token,
              stateDir: join(dir, `agent-${n}`),
              transport: TRANSPORT,
              log: () => undefined,
            });
          }),
        );
        agents.push(...batch);
      }
    };
    const health = async () => {
      for (let i = 0; i < 20; i += 1) await fetch(`${baseUrl}/api/v1/health`).then((r) => r.arrayBuffer());
      const samples: number[] = [];
      for (let i = 0; i < 300; i += 1) {
        const started = performance.now();
        await fetch(`${baseUrl}/api/v1/health`).then((r) => r.arrayBuffer());
        samples.push(performance.now() - started);
      }
      return samples;
    };

    await enroll(2);
    await sleep(5_000);
    console.log(
      `\n1. GET /api/v1/health, 2 idle agents (load ${loadavg()[0]!.toFixed(1)})\n   ${summary(await health())}`,
    );
    const enrollStarted = Date.now();
    await enroll(N - 2);
    console.log(
      `   (${N - 2} more agents enrolled and connected in ${((Date.now() - enrollStarted) / 1000).toFixed(1)} s)`,
    );
    await sleep(15_000);
    console.log(
      `   GET /api/v1/health, ${N} idle agents (load ${loadavg()[0]!.toFixed(1)})\n   ${summary(await health())}`,
    );

    const deps = (await import('../../functions/shared/targets-wiring.js')).targetsDeps();
    const target = agents[0]!.targetId;
    const toStart: number[] = [];
    const toStored: number[] = [];
    for (let i = 0; i < K; i += 1) {
      const command = await enqueueCommand(deps, {
        targetId: target,
        deploymentId: `bench-${randomUUID()}`,
        stepId: `step-${i}`,
        attempt: 1,
        action: { id: 'bench', slug: 'bench', version: '1.0.0' },
        script: 'true',
        interpreter: 'sh',
        variables: {},
        secretVariables: [],
        timeoutSeconds: 30,
      });
      for (const until = Date.now() + 30_000; ; await sleep(5)) {
        const stored = await deps.commands.get(command.id);
        if (stored?.status === 'completed' && stored.result !== null) {
          toStart.push(Date.parse(stored.result.startedAt) - Date.parse(command.createdAt));
          toStored.push(Date.now() - Date.parse(command.createdAt));
          break;
        }
        if (Date.now() > until) throw new Error(`command ${command.id} did not complete within 30 s`);
      }
      await sleep(100);
    }
    console.log(`\n2. A command queued for an online, idle agent (${K}, one at a time, ${N} agents connected)`);
    console.log(`   queued -> started on the agent   ${summary(toStart)}`);
    console.log(`   queued -> completion stored      ${summary(toStored)}`);
  } finally {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack?.stop();
    await rm(dir, { recursive: true, force: true });
  }
};

await runBench(main);
