// Benchmark (figures printed, nothing asserted): what an idle SSE stream costs per hour. Run with
//   npm run bench:idle-stream [-- SECONDS]   (default 60: each window measured that long)
//
// A local stack with local-1 and local-2 behind the counting proxy (aws-counter.ts: every DynamoDB call with its
// units) runs a deployment of one `sleep` on local-1: running, and quiet. Then, one after the other, SECONDS each:
//   0. nobody watching (the stack's own traffic and the quiet deployment's: subtracted from the others);
//   1. one log stream on that deployment (GET /deployments/{id}/logs);
//   2. one resource stream (GET /sse/deployments, the console's deployment list).
// Each stream's opening (its sse_token and the handshake's reads, measured in the first 2 s) is counted apart and
// repeated as often as the stream ends itself (its maxMs) in an hour. The streaming invocation is held open the whole
// hour, billed at the stream function's memory size in serverless.yml. Money with the prices of docs/cost.md.
// Last, the memory the function needs: the bundled streaming function alone in a process (stream-process.ts), its
// RSS with no stream, with 1 and with 10 log streams open, and their CPU.
import { cpus, loadavg } from 'node:os';
import { LOG_STREAM_TIMING } from '../../domain/streams/deployment-log.js';
import { RESOURCE_STREAM_TIMING } from '../../domain/streams/resource-changes.js';
import { type Stack } from '../../local/stack.js';
import { difference, withCountedStack, type Counter, type Tally } from './aws-counter.js';
import { dynamoOf, memorySizeOf, PRICE } from './prices.js';
import { printResults, type Figure } from './results.js';
import { startStreamProcess } from './stream-process.js';
import { runBench } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const SECONDS = Number(process.argv[2] ?? 60);
if (!Number.isInteger(SECONDS) || SECONDS < 10) throw new Error('SECONDS must be an integer of 10 or more');
const OPEN_SECONDS = 2;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

/** `after` minus `baseline` scaled to `share` of it (a window of another length), never below zero. */
const without = (after: Map<string, Tally>, baseline: Map<string, Tally>, share: number): Map<string, Tally> => {
  const out = new Map<string, Tally>();
  for (const [key, tally] of after) {
    const base = baseline.get(key) ?? { calls: 0, wru: 0, rru: 0, items: 0 };
    const left = {
      calls: Math.max(0, tally.calls - base.calls * share),
      wru: Math.max(0, tally.wru - base.wru * share),
      rru: Math.max(0, tally.rru - base.rru * share),
      items: Math.max(0, tally.items - base.items * share),
    };
    if (left.calls >= 0.5) out.set(key, left);
  }
  return out;
};

const scaled = (tallies: Map<string, Tally>, factor: number): Map<string, Tally> =>
  new Map(
    [...tallies].map(([k, t]) => [
      k,
      { calls: t.calls * factor, wru: t.wru * factor, rru: t.rru * factor, items: t.items * factor },
    ]),
  );

const merged = (a: Map<string, Tally>, b: Map<string, Tally>): Map<string, Tally> => {
  const out = scaled(a, 1);
  for (const [k, t] of b) {
    const was = out.get(k) ?? { calls: 0, wru: 0, rru: 0, items: 0 };
    out.set(k, {
      calls: was.calls + t.calls,
      wru: was.wru + t.wru,
      rru: was.rru + t.rru,
      items: was.items + t.items,
    });
  }
  return out;
};

/** One stream's hour: its steady DynamoDB traffic, its re-openings, the held invocation; printed and priced. */
const hourOf = (label: string, steady: Map<string, Tally>, open: Map<string, Tally>, maxMs: number, mb: number) => {
  const opensPerHour = 3_600_000 / maxMs;
  const hour = merged(scaled(steady, 3600 / SECONDS), scaled(open, opensPerHour));
  const dynamo = dynamoOf(hour);
  const gbSeconds = 3600 * (mb / 1024);
  // Each opening: the sse_token request (CloudFront, HTTP API, Lambda) and the stream's invocation (CloudFront, Lambda).
  const requests = opensPerHour * 2;
  const lambda = gbSeconds * PRICE.gbSecond + requests * PRICE.lambdaRequest;
  const edge = requests * PRICE.cloudFrontRequest + opensPerHour * PRICE.httpApiRequest;
  const total = lambda + dynamo.dollars + edge;
  console.log(`\n   ${label}, per hour (${SECONDS} s measured, the stack's own traffic subtracted)`);
  console.log(`   ${'operation'.padEnd(34)} ${'calls/h'.padStart(10)} ${'WRU/h'.padStart(9)} ${'RRU/h'.padStart(9)}`);
  for (const [operation, t] of [...hour].sort(([a], [b]) => a.localeCompare(b)))
    console.log(
      `   ${operation.padEnd(34)} ${t.calls.toFixed(0).padStart(10)} ${t.wru.toFixed(0).padStart(9)} ${t.rru.toFixed(0).padStart(9)}`,
    );
  console.log(
    `   re-opened ${opensPerHour.toFixed(1)} times an hour (the stream ends itself after ${maxMs / 60_000} min); held invocation ${gbSeconds.toFixed(0)} GB-s at ${mb} MB`,
  );
  console.log(
    `   $ per hour: ${total.toFixed(5)} (Lambda ${lambda.toFixed(5)}, DynamoDB ${dynamo.dollars.toFixed(5)}: ${dynamo.calls.toFixed(0)} calls, ${dynamo.wru.toFixed(0)} WRU, ${dynamo.rru.toFixed(0)} RRU; CloudFront and API ${edge.toFixed(6)}); per month (720 h) ${(total * 720).toFixed(2)}`,
  );
  return { dynamoCalls: dynamo.calls, total };
};

/** Opens a stream and reads it in the background until `cancel`; throws unless it answers 200. */
const openStream = async (url: string) => {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  let bytes = 0;
  const reading = (async () => {
    for await (const chunk of response.body ?? []) bytes += (chunk as Uint8Array).length;
  })().catch(() => undefined);
  return {
    bytes: () => bytes,
    cancel: async () => {
      controller.abort();
      await reading;
    },
  };
};

const window = async (counter: Counter, millis: number) => {
  const before = counter.snapshot();
  await sleep(millis);
  return difference(counter.snapshot(), before);
};

/**
 * The streaming function in a process of its own, its V8 heap limited to 100 MB (what fits the smallest Lambda, 128
 * MB): its RSS and heap with no stream, 1 and 10 idle log streams, and the CPU the 10 use.
 */
const memory = async (stack: Stack, proxyEndpoint: string, token: () => Promise<string>, deploymentId: string) => {
  const child = await startStreamProcess({ ...stack.env, AWS_ENDPOINT_URL: proxyEndpoint }, 100);
  const streams: Awaited<ReturnType<typeof openStream>>[] = [];
  const logs = async () => `${child.url}/api/v1/deployments/${deploymentId}/logs?sse_token=${await token()}`;
  try {
    const warm = await openStream(await logs());
    await sleep(2000);
    await warm.cancel();
    await sleep(1000);
    const none = await child.usage();
    streams.push(await openStream(await logs()));
    await sleep(3000);
    const one = await child.usage();
    for (let i = 1; i < 10; i += 1) streams.push(await openStream(await logs()));
    await sleep(3000);
    const from = await child.usage();
    await sleep(10_000);
    const ten = await child.usage();
    const f = (m: { rss: number; heap: number }) => `${m.rss.toFixed(0)} MB (heap ${m.heap.toFixed(0)} MB)`;
    const cpuPerStreamSecond = (ten.cpuMs - from.cpuMs) / 10 / 10;
    console.log(
      `\n   the streaming function alone (bundled, own process, V8 heap limit 100 MB): RSS ${f(none)} warm with no stream, ${f(one)} with 1 log stream, ${f(ten)} with 10; CPU ${cpuPerStreamSecond.toFixed(2)} ms per idle stream-second`,
    );
    return { none, one, ten, cpuPerStreamSecond };
  } finally {
    await Promise.all(streams.map((s) => s.cancel()));
    await child.stop();
  }
};

const main = async () => {
  const mb = await memorySizeOf('stream');
  console.log(
    `Idle SSE streams, ${SECONDS} s a window, stream function at ${mb} MB (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const figures: Figure[] = [];
  await withCountedStack(
    { name: 'idle', admin: ADMIN, env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '20000' } },
    async ({ stack, counter, proxyEndpoint, baseUrl, call }) => {
      const action = await call('POST', '/actions', {
        slug: 'quiet',
        name: 'Quiet',
        version: { version: '1.0.0', script: `echo start; sleep ${4 * SECONDS + 120}; echo end` },
      });
      const created = await call('POST', '/deployments', {
        action_id: action.id,
        target_tags: [{ key: 'role', value: 'web' }],
      });
      const deploymentId = created.deployment_id as string;
      await sleep(8000); // the command started, its first line stored, the engine's passes done
      const state = (await call('GET', `/deployments/${deploymentId}`)).state as string;
      if (state !== 'running') throw new Error(`the quiet deployment is ${state}, not running`);
      const token = async () => (await call('POST', '/auth/sse-token')).sse_token as string;

      const baseline = await window(counter, SECONDS * 1000);
      const measureStream = async (path: string) => {
        const before = counter.snapshot();
        const stream = await openStream(`${baseUrl}${path}${path.includes('?') ? '&' : '?'}sse_token=${await token()}`);
        await sleep(OPEN_SECONDS * 1000);
        const open = without(difference(counter.snapshot(), before), baseline, OPEN_SECONDS / SECONDS);
        const steady = without(await window(counter, SECONDS * 1000), baseline, 1);
        await stream.cancel();
        if (stream.bytes() === 0) throw new Error(`${path} sent nothing`);
        await sleep(1000);
        return { open, steady };
      };
      const log = await measureStream(`/api/v1/deployments/${deploymentId}/logs`);
      const logHour = hourOf('1. an idle log stream', log.steady, log.open, LOG_STREAM_TIMING.maxMs, mb);
      const list = await measureStream('/api/v1/sse/deployments');
      const listHour = hourOf(
        '2. an idle resource stream (deployments)',
        list.steady,
        list.open,
        RESOURCE_STREAM_TIMING.maxMs,
        mb,
      );
      const rss = await memory(stack, proxyEndpoint, token, deploymentId);
      figures.push(
        {
          bench: 'idle-stream',
          name: 'idle log stream DynamoDB calls/h',
          value: logHour.dynamoCalls,
          unit: 'ops',
          goal: '',
        },
        {
          bench: 'idle-stream',
          name: 'idle log stream micro-$/h',
          value: logHour.total * 1e6,
          unit: 'count',
          goal: '',
        },
        {
          bench: 'idle-stream',
          name: 'idle resource stream DynamoDB calls/h',
          value: listHour.dynamoCalls,
          unit: 'ops',
          goal: '',
        },
        {
          bench: 'idle-stream',
          name: 'stream function RSS, 10 streams',
          value: rss.ten.rss * 1024,
          unit: 'KiB',
          goal: '',
        },
      );
    },
  );
  printResults(figures);
};

await runBench(main);
