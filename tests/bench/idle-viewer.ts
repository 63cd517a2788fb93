// Benchmark (figures printed, nothing asserted): what an idle console tab costs per month over the viewer channel
// (issue 36; goal ≤ $0.05, SSE cost about $24). Run with `npm run bench:idle-viewer [-- SECONDS]` (default 60).
//
// The local stack behind the counting proxy (aws-counter.ts) with its two agents and one finished deployment. A viewer
// does what a console tab does: a token (POST /auth/sse-token), the WebSocket ($connect), a subscribe to the
// deployment's log (its catch-up, and the second read a second later: the invocation is billed at least 1 s) and to
// the `deployments` list with its snapshot (when the channel offers resource topics). Measured,
// each apart and the stack's own traffic subtracted: that opening; 10 pings (the console sends one every 5 min:
// API Gateway closes a connection idle for 10); SECONDS of nothing; the close ($disconnect). Every client message,
// connect and disconnect is an invocation of the socket function, billed its measured round trip (an upper bound) at
// its memory size; API Gateway bills each message either way and each connection-minute. A month is 43,200
// connection-minutes, 8,640 pings and 360 reconnects (API Gateway closes every connection after 2 hours). The stack's
// sweep is off and the agents stopped while measuring: what is left of the stack's own traffic is subtracted.
import { cpus, loadavg } from 'node:os';
import { difference, withCountedStack, type Tally } from './aws-counter.js';
import { dynamoOf, memorySizeOf, PRICE } from './prices.js';
import { printResults, type Figure } from './results.js';
import { runBench } from './support.js';
import { openViewer } from './viewer-client.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const SECONDS = Number(process.argv[2] ?? 60);
const PINGS = 10;
const MINUTES_PER_MONTH = 43_200;
const PINGS_PER_MONTH = MINUTES_PER_MONTH / 5;
const RECONNECTS_PER_MONTH = MINUTES_PER_MONTH / 120;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

/** A measured piece of use: invocations with their time, API Gateway messages, HTTP requests, DynamoDB. */
interface Piece {
  invocations: number;
  invocationMs: number;
  messages: number;
  httpRequests: number;
  aws: Map<string, Tally>;
}

const dollars = (piece: Piece, gb: number) => {
  const dynamo = dynamoOf(piece.aws);
  const lambda = piece.invocations * PRICE.lambdaRequest + (piece.invocationMs / 1000) * gb * PRICE.gbSecond;
  const gateway =
    piece.messages * PRICE.wsMessage + piece.httpRequests * (PRICE.httpApiRequest + PRICE.cloudFrontRequest);
  return {
    lambda,
    gateway,
    dynamo: dynamo.dollars,
    dynamoCalls: dynamo.calls,
    total: lambda + gateway + dynamo.dollars,
  };
};

const minus = (after: Map<string, Tally>, baseline: Map<string, Tally>, share: number) => {
  const out = new Map<string, Tally>();
  for (const [key, t] of after) {
    const b = baseline.get(key) ?? { calls: 0, wru: 0, rru: 0, items: 0 };
    const calls = Math.max(0, t.calls - b.calls * share);
    if (calls >= 0.5)
      out.set(key, {
        calls,
        wru: Math.max(0, t.wru - b.wru * share),
        rru: Math.max(0, t.rru - b.rru * share),
        items: Math.max(0, t.items - b.items * share),
      });
  }
  return out;
};

const show = (label: string, piece: Piece, per: number, gb: number) => {
  const m = dollars(piece, gb);
  const ops = [...piece.aws].map(([k, t]) => `${k.replace('dynamodb ', '')} ${(t.calls / per).toFixed(1)}`).join(', ');
  console.log(
    `   ${label.padEnd(36)} ${(piece.invocations / per).toFixed(1).padStart(5)} inv ${(piece.invocationMs / Math.max(1, piece.invocations)).toFixed(0).padStart(4)} ms each, ${(piece.messages / per).toFixed(1).padStart(4)} msg, ${(piece.httpRequests / per).toFixed(1)} HTTP, DynamoDB ${(m.dynamoCalls / per).toFixed(1)} (${ops || 'none'})  $${(m.total / per).toExponential(2)}`,
  );
  return m.total / per;
};

const main = async () => {
  const gb = (await memorySizeOf('viewerSocket')) / 1024;
  console.log(
    `An idle console tab on the viewer channel (socket function at ${gb * 1024} MB; machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const figures: Figure[] = [];
  // The stack's own periodic work (the sweep: one run a minute whatever the viewers) off, so the windows
  // show the viewer's own traffic; the agents are stopped once the deployment they ran has finished.
  await withCountedStack(
    { name: 'iviewer', admin: ADMIN, env: { SWEEP_INTERVAL_MS: '3600000' } },
    async ({ agents, counter, baseUrl, call }) => {
      const action = await call('POST', '/actions', {
        slug: 'echo',
        name: 'Echo',
        version: { version: '1.0.0', script: 'echo ok' },
      });
      const created = await call('POST', '/deployments', {
        action_id: action.id,
        target_tags: [{ key: 'role', value: 'web' }],
      });
      const deploymentId = created.deployment_id as string;
      for (const until = Date.now() + 60_000; ; await sleep(500)) {
        const state = (await call('GET', `/deployments/${deploymentId}`)).state as string;
        if (['success', 'failed'].includes(state)) break;
        if (Date.now() > until) throw new Error('the deployment did not finish');
      }
      await sleep(12_000); // the engine's last periodic check
      await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
      agents = [];
      await sleep(2_000);
      const at = () => counter.snapshot();
      const baselineStart = at();
      await sleep(SECONDS * 1000);
      const baseline = difference(at(), baselineStart);
      const since = (before: Map<string, Tally>, ms: number) =>
        minus(difference(at(), before), baseline, ms / (SECONDS * 1000));

      // The opening: token, $connect, subscribe with its snapshot
      let started = performance.now();
      let before = at();
      const tokenStarted = performance.now();
      const viewer = await openViewer(baseUrl, call);
      const connectMs = performance.now() - tokenStarted;
      const subscribeStarted = performance.now();
      await viewer.request({ action: 'subscribe', topic: 'deployment', deployment_id: deploymentId }, 'subscribed');
      // The subscribe's invocation lasts until its second read, a second after the subscription was stored
      const subscribeMs = Math.max(1_000, performance.now() - subscribeStarted);
      let listMs = 0;
      let topics = 'the deployment';
      try {
        const listStarted = performance.now();
        await viewer.request(
          { action: 'subscribe', topic: 'resources', resource_type: 'deployments', snapshot: true },
          'subscribed',
        );
        listMs = performance.now() - listStarted;
        topics += ' and the deployments list';
      } catch (error) {
        console.log(`   (the deployments list not subscribed: ${(error as Error).message})`);
      }
      await sleep(1500); // the catch-up's and the snapshot's messages
      const opening: Piece = {
        invocations: listMs > 0 ? 4 : 3, // sse-token, $connect, the subscribes
        invocationMs: connectMs + subscribeMs + listMs,
        messages: viewer.counts.sent + viewer.counts.received,
        httpRequests: 1,
        aws: since(before, performance.now() - started),
      };

      // Pings
      const sentBefore = viewer.counts.sent + viewer.counts.received;
      started = performance.now();
      before = at();
      let pingMs = 0;
      for (let i = 0; i < PINGS; i += 1) {
        const t = performance.now();
        await viewer.request({ action: 'ping' }, 'pong');
        pingMs += performance.now() - t;
        await sleep(200);
      }
      const pings: Piece = {
        invocations: PINGS,
        invocationMs: pingMs,
        messages: viewer.counts.sent + viewer.counts.received - sentBefore,
        httpRequests: 0,
        aws: since(before, performance.now() - started),
      };

      // Nothing at all
      const quietBefore = viewer.counts.received;
      before = at();
      await sleep(SECONDS * 1000);
      const quiet: Piece = {
        invocations: 0,
        invocationMs: 0,
        messages: viewer.counts.received - quietBefore,
        httpRequests: 0,
        aws: since(before, SECONDS * 1000),
      };

      // The close
      started = performance.now();
      before = at();
      await viewer.close();
      await sleep(2000);
      const closing: Piece = {
        invocations: 1,
        invocationMs: 20,
        messages: 0,
        httpRequests: 0,
        aws: since(before, performance.now() - started),
      };

      console.log();
      console.log(`   a tab watching ${topics}`);
      const openCost = show('opening (token, $connect, subscribe)', opening, 1, gb);
      const pingCost = show('a ping', pings, PINGS, gb);
      const quietMinute = show(`a quiet minute (${SECONDS} s measured)`, quiet, SECONDS / 60, gb);
      const closeCost = show('the close ($disconnect)', closing, 1, gb);
      const month = {
        connection: MINUTES_PER_MONTH * PRICE.wsConnectionMinute,
        pings: PINGS_PER_MONTH * pingCost,
        reconnects: RECONNECTS_PER_MONTH * (openCost + closeCost),
        quiet: MINUTES_PER_MONTH * quietMinute,
      };
      const total = Object.values(month).reduce((a, b) => a + b, 0);
      console.log(
        `\n   an idle console tab, per month: $${total.toFixed(4)} (connection-minutes $${month.connection.toFixed(4)}, ${PINGS_PER_MONTH} pings $${month.pings.toFixed(4)}, ${RECONNECTS_PER_MONTH} reconnects $${month.reconnects.toFixed(4)}, quiet DynamoDB $${month.quiet.toFixed(4)}); goal ≤ $0.05`,
      );
      figures.push(
        {
          bench: 'idle-viewer',
          name: 'idle console tab per month, micro-$',
          value: total * 1e6,
          unit: 'count',
          goal: '≤ 50000',
        },
        {
          bench: 'idle-viewer',
          name: 'DynamoDB calls per ping',
          value: dynamoOf(pings.aws).calls / PINGS,
          unit: 'ops',
          goal: '',
        },
        {
          bench: 'idle-viewer',
          name: 'DynamoDB calls per quiet minute',
          value: dynamoOf(quiet.aws).calls / (SECONDS / 60),
          unit: 'ops',
          goal: '',
        },
      );
    },
  );
  printResults(figures);
};

await runBench(main);
