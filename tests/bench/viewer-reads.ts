// Benchmark (figures printed, nothing asserted): DynamoDB reads per log line when many viewers watch one busy
// deployment over the WebSocket channel (issue 36; goal: at most 1 per line, whatever the viewer count). Run with
//   npm run bench:viewer-reads [-- LINES [VIEWERS,...]]   (defaults 1000 lines, viewer counts 0,1,50)
//
// The local stack behind the counting proxy (aws-counter.ts) with local-1 and local-2. For each viewer count, a
// deployment on local-1 prints LINES lines, 5 ms apart, after a lead-in in which the viewers connect and subscribe.
// Counted apart: the subscriptions (token, connect, subscribe and its catch-up reads), and everything from 5 s before
// the first line to the deployment's end (its output's writes and reads, the pushes' subscriber queries). The reads of the run
// with viewers minus those of the run without them, per line, is what watching costs the store; every viewer is
// checked to have received every line.
import { cpus, loadavg } from 'node:os';
import { difference, withCountedStack, type Tally } from './aws-counter.js';
import { printResults, type Figure } from './results.js';
import { runBench } from './support.js';
import { openViewer, type Viewer } from './viewer-client.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const LINES = Number(process.argv[2] ?? 1000);
const COUNTS = (process.argv[3] ?? '0,1,50').split(',').map(Number);
const LEAD_IN_MS = 40_000;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));
const READS = /^dynamodb (GetItem|Query|Scan|BatchGetItem|TransactGetItems)$/;

const readsIn = (tallies: Map<string, Tally>) => {
  let calls = 0;
  let rru = 0;
  for (const [operation, tally] of tallies)
    if (READS.test(operation)) {
      calls += tally.calls;
      rru += tally.rru;
    }
  return { calls, rru };
};

const main = async () => {
  console.log(
    `DynamoDB reads per log line with viewers on the channel: ${LINES} lines, viewers ${COUNTS.join(', ')} (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const figures: Figure[] = [];
  await withCountedStack(
    {
      name: 'vreads',
      admin: ADMIN,
      env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '20000', STREAMS_PER_USER: '200' },
    },
    async ({ counter, baseUrl, call }) => {
      const script = `setTimeout(() => {
  let i = 0;
  const tick = () => {
    console.log('line ' + i);
    i += 1;
    if (i < ${LINES}) setTimeout(tick, 5);
  };
  tick();
}, ${LEAD_IN_MS});`;
      const action = await call('POST', '/actions', {
        slug: 'busy',
        name: 'Busy',
        version: { version: '1.0.0', interpreter: 'node', script },
      });
      const rows: { viewers: number; total: number; rru: number; subscribe: number; received: number[] }[] = [];
      for (const count of COUNTS) {
        const createdAt = Date.now();
        const created = await call('POST', '/deployments', {
          action_id: action.id,
          target_tags: [{ key: 'role', value: 'web' }],
        });
        const deploymentId = created.deployment_id as string;
        const subscribeBefore = counter.snapshot();
        const viewers: Viewer[] = [];
        const received: number[] = [];
        for (let i = 0; i < count; i += 1) {
          const viewer = await openViewer(baseUrl, call);
          const index = received.push(0) - 1;
          viewer.onFrame((frame) => {
            if (frame.type !== 'events') return;
            for (const event of frame['events'] as { event: string }[])
              if (event.event === 'log') received[index]! += 1;
          });
          await viewer.request({ action: 'subscribe', topic: 'deployment', deployment_id: deploymentId }, 'subscribed');
          viewers.push(viewer);
        }
        const subscribe = readsIn(difference(counter.snapshot(), subscribeBefore));
        // Every run counts from the same moment, 5 s before the first line: the deployment's start is behind it
        const late = Date.now() - (createdAt + LEAD_IN_MS - 5_000);
        if (late > 0) console.log(`   ${count} viewers: subscribed ${late} ms after the window should have opened`);
        await sleep(-late);
        const before = counter.snapshot();
        for (const until = Date.now() + LEAD_IN_MS + 120_000; ; await sleep(500)) {
          const state = (await call('GET', `/deployments/${deploymentId}`)).state as string;
          if (['success', 'failed'].includes(state)) break;
          if (Date.now() > until) throw new Error('the deployment did not finish');
        }
        await sleep(3_000);
        const all = readsIn(difference(counter.snapshot(), before));
        await Promise.all(viewers.map((v) => v.close()));
        rows.push({
          viewers: count,
          total: all.calls,
          rru: all.rru,
          subscribe: subscribe.calls,
          received,
        });
        await sleep(2_000);
      }
      const base = rows.find((r) => r.viewers === 0);
      console.log(
        `\n   ${'viewers'.padStart(7)} ${'reads/line'.padStart(11)} ${'RRU/line'.padStart(9)} ${'extra reads/line'.padStart(17)} ${'subscribe reads/viewer'.padStart(23)}  lines received (min of viewers)`,
      );
      for (const r of rows) {
        const extra = base === undefined ? NaN : (r.total - base.total) / LINES;
        console.log(
          `   ${String(r.viewers).padStart(7)} ${(r.total / LINES).toFixed(3).padStart(11)} ${(r.rru / LINES).toFixed(3).padStart(9)} ${extra.toFixed(3).padStart(17)} ${(r.viewers === 0 ? 0 : r.subscribe / r.viewers).toFixed(1).padStart(23)}  ${r.viewers === 0 ? '-' : Math.min(...r.received)}`,
        );
        if (r.viewers > 0) {
          figures.push({
            bench: 'viewer-reads',
            name: `extra DynamoDB reads per log line, ${r.viewers} viewers`,
            value: extra,
            unit: 'count',
            goal: '≤ 1',
          });
          figures.push({
            bench: 'viewer-reads',
            name: `lines missed by a viewer, ${r.viewers} viewers`,
            value: LINES - Math.min(...r.received),
            unit: 'count',
            goal: '0',
          });
        }
      }
      console.log('   (reads/line: every DynamoDB read from 5 s before the first line to 3 s after the end)');
    },
  );
  printResults(figures.filter((f) => Number.isFinite(f.value)));
};

await runBench(main);
