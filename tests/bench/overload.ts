// Benchmark (figures printed, nothing asserted): the local stack under overload. Run with `npm run bench:overload`.
//
// Open-loop load (requests fired on a schedule, never waiting for each other), each request given 10 s before it
// counts as a timeout. The four client addresses are loopback addresses the requests are sent from (127.0.0.11 to
// .14: on Linux the whole of 127.0.0.0/8 reaches the front, which reports the connecting address to the limiter).
//   a. Mixed authenticated reads (auth/me, deployments, targets, server/info) over 4 addresses at 150 requests/s
//      for 15 s: latency percentiles and status counts.
//   b. 300 requests/s offered for 10 s: the longest wait and the share shed (503/429); then the recovery, the time
//      from the end of the load until three probes in a row answer 200 within normal latency.
//   c. 400 concurrent GETs from one address: counts of 200/429/503 and the slowest answer.
// `--cold` starts the stack without warming its functions (npm start warms them before its banner), so phase a
// shows what the first seconds of a cold stack were like.
// The load generator runs on a thread of its own (load-thread.ts), beside the front, the stream runner and the SQS
// pollers of this process; on a machine others may be using, figures are noisy.
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { startStack } from '../../local/stack.js';
import { startLoadThread, type Outcome } from './load-thread.js';
import { runBench, signedIn } from './support.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const TIMEOUT_MS = 10_000;
const LOAD_ADDRESSES = ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14'];
const PROBE_ADDRESS = '127.0.0.20';
const BURST_ADDRESS = '127.0.0.30';
const READS = ['/api/v1/auth/me', '/api/v1/deployments', '/api/v1/targets', '/api/v1/server/info'];

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

const results: string[] = [];
const result = (name: string, value: number, unit: 'ms' | '%' | 'count' | 's', goal = '') =>
  results.push(
    `RESULT ${JSON.stringify({ bench: 'overload', name, value: Number(value.toFixed(unit === 'count' ? 0 : 1)), unit, goal })}`,
  );

const statusCounts = (outcomes: readonly Outcome[]) => {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = o.status === 0 ? 'timeout' : String(o.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort()
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ');
};
const share = (outcomes: readonly Outcome[], statuses: readonly number[]) =>
  (100 * outcomes.filter((o) => statuses.includes(o.status)).length) / Math.max(1, outcomes.length);
const latencies = (outcomes: readonly Outcome[]) => {
  const sorted = outcomes.map((o) => (o.status === 0 ? TIMEOUT_MS : o.ms)).sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
  };
};
const line = (label: string, outcomes: readonly Outcome[]) => {
  const l = latencies(outcomes);
  const f = (n: number) => `${n.toFixed(0)} ms`;
  console.log(
    `   ${label}: ${outcomes.length} requests; p50 ${f(l.p50)}, p95 ${f(l.p95)}, p99 ${f(l.p99)}, max ${f(l.max)}; ${statusCounts(outcomes)}`,
  );
  const refused = outcomes.filter((o) => o.status === 503 || o.status === 429);
  if (refused.length > 0) {
    const without = refused.filter((o) => o.retryAfter === undefined).length;
    console.log(`      ${refused.length} refused, ${without} of them without Retry-After`);
  }
  return l;
};

const main = async () => {
  console.log(
    `Overload: the local stack past its capacity (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const cold = process.argv.includes('--cold');
  const stack = await startStack({
    port: 0,
    namePrefix: `bench-overload-${randomUUID().slice(0, 8)}-`,
    bootstrapAdmin: ADMIN,
    warm: !cold,
  });
  console.log(cold ? 'functions cold (--cold): loaded by the first requests' : 'functions warmed before the load');
  const { token } = await signedIn(stack, ADMIN);
  const load = startLoadThread({ port: stack.port, token, timeoutMs: TIMEOUT_MS });
  try {
    const mixed = { paths: READS, addresses: LOAD_ADDRESSES };

    // Warm every function, then the idle latency a probe compares with.
    await load.openLoop(10, 4, mixed);
    const idle: Outcome[] = [];
    for (let i = 0; i < 30; i += 1) idle.push(await load.one('/api/v1/server/info', PROBE_ADDRESS));
    const idleP50 = latencies(idle).p50;
    const normal = Math.max(50, 3 * idleP50);
    console.log(
      `   idle GET /api/v1/server/info p50 ${idleP50.toFixed(1)} ms; "normal latency" below ${normal.toFixed(0)} ms`,
    );

    // a. 150 requests/s for 15 s
    const a = await load.openLoop(150, 15, mixed);
    const la = line('a. 150 requests/s, 15 s', a);
    result('150 rps p50', la.p50, 'ms');
    result('150 rps p99', la.p99, 'ms', 'p99 <= 100 ms');
    result('150 rps max', la.max, 'ms');
    result('150 rps non-200 share', 100 - share(a, [200]), '%');
    result('150 rps timeouts', (100 * a.filter((o) => o.status === 0).length) / Math.max(1, a.length), '%', '0');
    await sleep(3_000);

    // b. 300 requests/s for 10 s, then the recovery: probes every 100 ms from a fifth address, until three in a row
    // answer 200 within normal latency after the last request of the load was sent.
    const probes: Outcome[] = [];
    const state: { loadEndedAt?: number; recoveredAt?: number } = {};
    const probing = (async () => {
      const until = (await load.now()) + 70_000;
      let inRow = 0;
      while (inRow < 3 && (await load.now()) < until) {
        const outcome = await load.one('/api/v1/server/info', PROBE_ADDRESS);
        probes.push(outcome);
        if (state.loadEndedAt !== undefined && outcome.at >= state.loadEndedAt) {
          inRow = outcome.status === 200 && outcome.ms <= normal ? inRow + 1 : 0;
          if (inRow === 1) state.recoveredAt = outcome.at + outcome.ms;
        }
        await sleep(100);
      }
      if (inRow < 3) delete state.recoveredAt;
    })();
    const b = await load.openLoop(300, 10, mixed);
    const endedAt = Math.max(...b.map((o) => o.at));
    state.loadEndedAt = endedAt;
    await probing;
    const lb = line('b. 300 requests/s, 10 s', b);
    const during = probes.filter((p) => p.at < endedAt);
    if (during.length > 0) line('   probes from a fifth address during the load', during);
    const recovery = state.recoveredAt === undefined ? NaN : Math.max(0, (state.recoveredAt - endedAt) / 1000);
    console.log(
      `   recovery: ${Number.isNaN(recovery) ? 'not within 60 s' : `${recovery.toFixed(1)} s`} after the last request was sent until a probe answered within ${normal.toFixed(0)} ms (3 in a row)`,
    );
    result('300 rps max wait', lb.max, 'ms', 'no request waits longer than 1 s');
    result('300 rps p99', lb.p99, 'ms');
    result('300 rps shed share', share(b, [503, 429]), '%');
    result('300 rps timeouts', b.filter((o) => o.status === 0).length, 'count', '0');
    result('recovery after load', Number.isNaN(recovery) ? 60 : recovery, 's', 'within 5 s');
    await sleep(5_000);

    // c. 400 concurrent GETs from one address
    const burst = await load.burst(400, { paths: ['/api/v1/server/info'], addresses: [BURST_ADDRESS] });
    const lc = line('c. 400 concurrent GETs from one address', burst);
    const count = (status: number) => burst.filter((o) => o.status === status).length;
    result('burst 400: 200 count', count(200), 'count');
    result('burst 400: 429 count', count(429), 'count', 'some 429s');
    result('burst 400: 503 count', count(503), 'count');
    result('burst 400: timeouts', count(0), 'count', '0');
    result('burst 400: slowest', lc.max, 'ms');
    const after = await load.one('/api/v1/auth/me', PROBE_ADDRESS);
    console.log(`   a request from another address right after: ${after.status} in ${after.ms.toFixed(0)} ms`);

    console.log('');
    for (const r of results) console.log(r);
  } finally {
    await load.stop();
    await stack.stop();
  }
};

await runBench(main);
