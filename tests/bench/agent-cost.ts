// Benchmark (figures printed, nothing asserted): what each unit of use costs in the cloud, from operation counts
// measured on the local stack. Feeds docs/cost.md. Run with
//   npm run bench:cost [-- --agents N] [--transport websocket|polling] [--idle-ping SECONDS]
// (defaults: 10 agents, websocket, idle pings every 25 s, the service's AGENT_IDLE_PING_SECONDS; the money table
// scales the measured cost of one ping to that cadence when another is given).
//
// Two counters: the counting proxy in front of the emulators (aws-counter.ts: every DynamoDB and SQS call) and a
// counting gateway in front of the stack's origin, standing where API Gateway stands in the cloud. Every client
// (the agents and this benchmark) goes through the gateway: it counts each HTTP request by route with its duration
// (a Lambda invocation and its billed time, an upper bound: it includes the local front), and relays the agents'
// WebSockets, counting connections, their minutes and the messages each way (AGENT_SOCKET_URL points at it).
//
// Measured: 1. idle agents (per agent and minute, and per connection), 2. API requests by route, 3. one deployment
// of one command on all N agents, 4. a viewer on a deployment's log stream (per minute, the running deployment's own
// traffic subtracted). Then the money, with the prices of docs/cost.md.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket, WebSocketServer } from 'ws';
import { startAgent, type RunningAgent } from '../../agent/agent.js';
import { startDynamo, startSqs } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack } from '../../local/stack.js';
import { Counter, difference, startCountingProxy, type Tally } from './aws-counter.js';
import { runBench, signedIn } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const { values: args } = parseArgs({
  options: {
    agents: { type: 'string', default: '10' },
    transport: { type: 'string', default: 'websocket' },
    'idle-ping': { type: 'string', default: '25' },
  },
});
const N = Number(args.agents);
const TRANSPORT = args.transport as 'websocket' | 'polling';
const IDLE_PING_SECONDS = Number(args['idle-ping']);
if (!Number.isInteger(N) || N < 1 || N > 200) throw new Error('--agents must be 1 to 200');
if (TRANSPORT !== 'websocket' && TRANSPORT !== 'polling') throw new Error('--transport is websocket or polling');
if (!Number.isInteger(IDLE_PING_SECONDS) || IDLE_PING_SECONDS < 5 || IDLE_PING_SECONDS > 45)
  throw new Error('--idle-ping must be 5 to 45 (AGENT_IDLE_PING_SECONDS)');

const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const PRODUCTION_IDLE_PING_SECONDS = 25;
const MINUTES_PER_MONTH = 43_200;
const GB = 0.5; // the functions' memory
const PRICE = {
  lambdaRequest: 0.2e-6,
  gbSecond: 0.0000133334,
  httpApiRequest: 1e-6,
  wsMessage: 1e-6,
  wsConnectionMinute: 0.25e-6,
  wru: 0.625e-6,
  rru: 0.125e-6,
  sqsRequest: 0.4e-6,
};
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

/** What the gateway saw: HTTP requests by route (count, ms), and the agents' sockets. */
interface GatewayTally {
  http: Map<string, { count: number; ms: number }>;
  connects: number;
  disconnects: number;
  toServer: number;
  toAgent: number;
  /** Connection time, ms, of sockets closed plus open ones up to the snapshot. */
  connectionMs: number;
}

/** `GET /api/v1/deployments/{id}`: ids after a collection name become `{id}`, queries are dropped. */
const routeOf = (method: string, url: string): string => {
  const parts = new URL(url, 'http://x').pathname.split('/');
  const named = parts.map((part, i) =>
    ['deployments', 'commands', 'targets', 'actions'].includes(parts[i - 1] ?? '') && part !== 'enrollment-tokens'
      ? '{id}'
      : part,
  );
  return `${method} ${named.join('/')}`;
};

class Gateway {
  private readonly http = new Map<string, { count: number; ms: number }>();
  private connects = 0;
  private disconnects = 0;
  private toServer = 0;
  private toAgent = 0;
  private closedMs = 0;
  private readonly open = new Map<WebSocket, number>();
  private server: Server | undefined;
  port = 0;

  constructor(private readonly front: () => string) {}

  async start(): Promise<void> {
    this.port = await freePort();
    const wss = new WebSocketServer({ noServer: true });
    this.server = createServer((req, res) => {
      const started = performance.now();
      const target = new URL(this.front());
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', () => this.count(routeOf(req.method ?? 'GET', req.url ?? '/'), performance.now() - started));
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => {
        upstream.destroy();
        // An event stream ends when the client closes it: its whole time is the function's.
        if (!res.writableFinished)
          this.count(routeOf(req.method ?? 'GET', req.url ?? '/'), performance.now() - started);
      });
      req.pipe(upstream);
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.relay(wss, req, socket, head),
    );
    await new Promise<void>((done) => this.server!.listen(this.port, '127.0.0.1', done));
  }

  private count(route: string, ms: number): void {
    const tally = this.http.get(route) ?? { count: 0, ms: 0 };
    tally.count += 1;
    tally.ms += ms;
    this.http.set(route, tally);
  }

  private relay(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = `${this.front().replace(/^http/, 'ws')}/api/v1/agent/socket`;
    // The handshake's agent token and installation id (an agent that names its installation is pushed commands).
    const instance = req.headers['x-deployer-agent-instance'];
    const upstream = new WebSocket(url, {
      headers: {
        authorization: String(req.headers.authorization ?? ''),
        ...(typeof instance === 'string' ? { 'x-deployer-agent-instance': instance } : {}),
      },
    });
    upstream.once('unexpected-response', (_request, response) => {
      socket.end(`HTTP/1.1 ${response.statusCode ?? 502} Refused\r\ncontent-length: 0\r\n\r\n`);
    });
    upstream.once('error', () => socket.destroy());
    upstream.once('open', () =>
      wss.handleUpgrade(req, socket, head, (client) => {
        this.connects += 1;
        this.open.set(client, performance.now());
        client.on('message', (data, binary) => {
          this.toServer += 1;
          upstream.send(data, { binary });
        });
        upstream.on('message', (data, binary) => {
          this.toAgent += 1;
          client.send(data, { binary });
        });
        const end = () => {
          const since = this.open.get(client);
          if (since !== undefined) {
            this.closedMs += performance.now() - since;
            this.open.delete(client);
            this.disconnects += 1;
          }
          client.close();
          upstream.close();
        };
        client.on('close', end);
        upstream.on('close', end);
      }),
    );
  }

  /** Closes every agent socket from the gateway's side (API Gateway's 2-hour limit): the agents reconnect. */
  dropAll(): void {
    for (const client of this.open.keys()) client.close(1001, 'Going away');
  }

  snapshot(): GatewayTally {
    const now = performance.now();
    return {
      http: new Map([...this.http].map(([k, v]) => [k, { ...v }])),
      connects: this.connects,
      disconnects: this.disconnects,
      toServer: this.toServer,
      toAgent: this.toAgent,
      connectionMs: this.closedMs + [...this.open.values()].reduce((sum, since) => sum + (now - since), 0),
    };
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server === undefined ? done() : this.server.close(() => done())));
  }
}

const gatewayDifference = (after: GatewayTally, before: GatewayTally): GatewayTally => ({
  http: new Map(
    [...after.http]
      .map(
        ([k, v]) =>
          [k, { count: v.count - (before.http.get(k)?.count ?? 0), ms: v.ms - (before.http.get(k)?.ms ?? 0) }] as const,
      )
      .filter(([, v]) => v.count > 0),
  ),
  connects: after.connects - before.connects,
  disconnects: after.disconnects - before.disconnects,
  toServer: after.toServer - before.toServer,
  toAgent: after.toAgent - before.toAgent,
  connectionMs: after.connectionMs - before.connectionMs,
});

/** A window of use: everything both counters saw, and its money (per the divisor `per`). */
interface Window {
  readonly gateway: GatewayTally;
  readonly aws: Map<string, Tally>;
}

const measure = async (counter: Counter, gateway: Gateway, fn: () => Promise<unknown>): Promise<Window> => {
  const aws = counter.snapshot();
  const gw = gateway.snapshot();
  await fn();
  return { aws: difference(counter.snapshot(), aws), gateway: gatewayDifference(gateway.snapshot(), gw) };
};

/** The cloud cost of a window, in dollars, with its parts; `wsMessageMs`: the estimated run time of one message. */
const money = (w: Window, wsMessageMs: number) => {
  const httpRequests = [...w.gateway.http.values()].reduce((n, v) => n + v.count, 0);
  const httpMs = [...w.gateway.http.values()].reduce((n, v) => n + v.ms, 0);
  // Every HTTP request and every message an agent sends runs a function; connects and disconnects do too.
  const invocations = httpRequests + w.gateway.toServer + w.gateway.connects + w.gateway.disconnects;
  const sqsSends = [...w.aws].filter(([k]) => k === 'sqs SendMessage').reduce((n, [, t]) => n + t.calls, 0);
  const consumerInvocations = sqsSends; // at most one consumer invocation per message sent
  const gbSeconds =
    ((httpMs + (w.gateway.toServer + w.gateway.connects + w.gateway.disconnects) * wsMessageMs) / 1000) * GB;
  const wru = [...w.aws.values()].reduce((n, t) => n + t.wru, 0);
  const rru = [...w.aws.values()].reduce((n, t) => n + t.rru, 0);
  const dynamoCalls = [...w.aws].filter(([k]) => k.startsWith('dynamodb')).reduce((n, [, t]) => n + t.calls, 0);
  const parts = {
    lambda: (invocations + consumerInvocations) * PRICE.lambdaRequest + gbSeconds * PRICE.gbSecond,
    apiGateway:
      httpRequests * PRICE.httpApiRequest +
      (w.gateway.toServer + w.gateway.toAgent) * PRICE.wsMessage +
      (w.gateway.connectionMs / 60_000) * PRICE.wsConnectionMinute,
    dynamodb: wru * PRICE.wru + rru * PRICE.rru,
    sqs: sqsSends * 3 * PRICE.sqsRequest, // send, receive, delete
  };
  return {
    invocations: invocations + consumerInvocations,
    httpRequests,
    wsMessages: w.gateway.toServer + w.gateway.toAgent,
    connectionMinutes: w.gateway.connectionMs / 60_000,
    gbSeconds,
    dynamoCalls,
    wru,
    rru,
    sqsSends,
    parts,
    total: Object.values(parts).reduce((a, b) => a + b, 0),
  };
};

const show = (title: string, w: Window, per: number, unit: string, wsMessageMs: number) => {
  const m = money(w, wsMessageMs);
  const f = (n: number) => (n / per).toFixed(2);
  console.log(`\n   ${title}`);
  console.log(
    `   per ${unit}: ${f(m.invocations)} invocations (${f(m.httpRequests)} HTTP, ${f(m.wsMessages)} socket messages, ${f(m.sqsSends)} queue messages), ${f(m.gbSeconds)} GB-s, ${f(m.connectionMinutes)} connection-min, ${f(m.dynamoCalls)} DynamoDB calls (${f(m.wru)} WRU, ${f(m.rru)} RRU)`,
  );
  for (const [route, v] of [...w.gateway.http].sort(([a], [b]) => a.localeCompare(b)))
    console.log(
      `      ${route.padEnd(48)} ${f(v.count).padStart(8)} req  ${(v.ms / v.count).toFixed(0).padStart(6)} ms each`,
    );
  for (const [op, t] of [...w.aws].sort(([a], [b]) => a.localeCompare(b)))
    console.log(`      ${op.padEnd(48)} ${f(t.calls).padStart(8)} calls`);
  console.log(
    `   $ per ${unit}: ${(m.total / per).toExponential(3)} (${Object.entries(m.parts)
      .map(([k, v]) => `${k} ${(v / per).toExponential(2)}`)
      .join(', ')})`,
  );
  return { ...m, per };
};

const main = async () => {
  console.log(
    `Cost per unit of use, ${N} agents over ${TRANSPORT} (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-cost-'));
  const counter = new Counter();
  const dynamo = await startDynamo({ port: await freePort() });
  const sqs = await startSqs({ port: await freePort() });
  const proxy = await startCountingProxy(dynamo, sqs, counter);
  process.env['AWS_ENDPOINT_URL'] = proxy.endpoint;
  let stack: Stack | undefined;
  const agents: RunningAgent[] = [];
  const gateway = new Gateway(() => stack!.baseUrl);
  await gateway.start();
  const via = `http://127.0.0.1:${gateway.port}`;
  try {
    stack = await startStack({
      port: 0,
      namePrefix: `bench-cost-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
      env: {
        RATE_LIMIT_PER_SECOND: '10000',
        RATE_LIMIT_BURST: '20000',
        AGENT_SOCKET_URL: `ws://127.0.0.1:${gateway.port}/api/v1/agent/socket`,
        AGENT_IDLE_PING_SECONDS: String(IDLE_PING_SECONDS),
      },
    });
    const { call } = await signedIn({ baseUrl: via }, ADMIN);
    const enrollment = (
      await call('POST', '/targets/enrollment-tokens', {
        expires_in_hours: 1,
        max_uses: N,
        tags: [{ key: 'bench', value: 'cost' }],
      })
    ).token as string;

    // The stack alone (the sweep, the consumers): subtracted from the idle agents' window
    const idleSeconds = 2 * IDLE_PING_SECONDS;
    const baseline = await measure(counter, gateway, () => sleep(idleSeconds * 1000));

    // 0. Enrollment and the first connection of every agent
    const started = await measure(counter, gateway, async () => {
      for (let i = 0; i < N; i += 10) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(10, N - i) }, (_, j) =>
            startAgent({
              server: via,
              name: `cost-${i + j + 1}`,
              enrollToken: enrollment,
              stateDir: join(dir, `agent-${i + j + 1}`),
              transport: TRANSPORT,
              log: () => undefined,
            }),
          ),
        );
        agents.push(...batch);
      }
      await sleep(5_000);
    });
    const connectWindow = started;
    const action = await call('POST', '/actions', {
      slug: 'cost-echo',
      name: 'Echo',
      version: { version: '1.0.0', script: 'echo ok' },
    });
    const sleeper = await call('POST', '/actions', {
      slug: 'cost-sleep',
      name: 'Sleep',
      version: { version: '1.0.0', script: 'echo start; sleep 75; echo end' },
    });
    await sleep(3_000);

    // 1. Idle: N agents, nobody calling, two idle-ping periods, the stack's own idle traffic subtracted
    const measured = await measure(counter, gateway, () => sleep(idleSeconds * 1000));
    const idle: Window = {
      gateway: gatewayDifference(measured.gateway, baseline.gateway),
      aws: difference(measured.aws, baseline.aws),
    };
    // The run time of one socket message: an HTTP heartbeat does the same work (the agent token, one write); the
    // median of 20 on the idle stack.
    const beats: number[] = [];
    const agentToken = JSON.parse(await readFile(join(dir, 'agent-1', 'state.json'), 'utf8')).agent_token as string;
    for (let i = 0; i < 20; i += 1) {
      const started = performance.now();
      await fetch(`${stack.baseUrl}/api/v1/agent/heartbeat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agentToken}` },
      }).then((r) => r.arrayBuffer());
      beats.push(performance.now() - started);
    }
    const wsMessageMs = beats.sort((a, b) => a - b)[10]!;
    console.log(
      `\n   one heartbeat's run time (median of 20 over HTTP, used for each socket message): ${wsMessageMs.toFixed(1)} ms`,
    );
    // A reconnect (API Gateway closes every socket after 2 hours): every socket dropped, the agents come back.
    const reconnect = await measure(counter, gateway, async () => {
      gateway.dropAll();
      await sleep(8_000);
    });
    const idlePerAgentMinute = show(
      `1. idle: ${N} agents for ${idleSeconds} s (pings every ${IDLE_PING_SECONDS} s), per agent-minute`,
      idle,
      N * (idleSeconds / 60),
      'agent-min',
      wsMessageMs,
    );
    show(
      `0. an agent's first start (enrollment, channel, $connect, drain), per agent`,
      connectWindow,
      N,
      'agent',
      wsMessageMs,
    );
    const perConnect = show(
      `0. a reconnect (socket closed by the gateway; $disconnect, channel, $connect, drain), per agent`,
      reconnect,
      N,
      'agent',
      wsMessageMs,
    );

    // 2. API requests by route (the agents' idle traffic is small and left in)
    const REQUESTS = 20;
    const deployments: string[] = [];
    const byRoute: [string, () => Promise<unknown>][] = [
      ['GET /server/info', () => call('GET', '/server/info')],
      ['GET /auth/me', () => call('GET', '/auth/me')],
      ['GET /targets', () => call('GET', '/targets')],
      ['GET /deployments', () => call('GET', '/deployments')],
    ];
    const requestCosts: [string, number][] = [];
    for (const [label, fn] of byRoute) {
      const w = await measure(counter, gateway, async () => {
        for (let i = 0; i < REQUESTS; i += 1) await fn();
      });
      requestCosts.push([label, show(`2. ${label}`, w, REQUESTS, 'request', wsMessageMs).total / REQUESTS]);
    }

    // 3. One deployment of one command on all N agents, create to success (the client polls once a second)
    const deploy = await measure(counter, gateway, async () => {
      const created = await call('POST', '/deployments', {
        action_id: action.id,
        target_tags: [{ key: 'bench', value: 'cost' }],
        target_mode: 'parallel',
      });
      deployments.push(created.deployment_id as string);
      for (const until = Date.now() + 120_000; ; await sleep(1000)) {
        const state = (await call('GET', `/deployments/${created.deployment_id}`)).state as string;
        if (['success', 'failed'].includes(state)) break;
        if (Date.now() > until) throw new Error('the deployment did not finish within 120 s');
      }
      await sleep(12_000); // the engine's last periodic check
    });
    const perDeployment = show(
      `3. one deployment of one command on ${N} targets`,
      deploy,
      1,
      'deployment',
      wsMessageMs,
    );

    // 4. A viewer on a running deployment's log stream: 30 s without, 30 s with (one target, sleep 75)
    const running = await call('POST', '/deployments', {
      action_id: sleeper.id,
      target_ids: [(await call('GET', '/targets?limit=1')).data[0].id],
    });
    await sleep(5_000);
    const without = await measure(counter, gateway, () => sleep(30_000));
    const sse = (await call('POST', '/auth/sse-token')).sse_token as string;
    const withViewer = await measure(counter, gateway, async () => {
      const stream = await fetch(`${via}/api/v1/deployments/${running.deployment_id}/logs?sse_token=${sse}`);
      await sleep(30_000);
      await stream.body?.cancel();
      await sleep(200);
    });
    const viewer: Window = {
      gateway: gatewayDifference(withViewer.gateway, without.gateway),
      aws: difference(withViewer.aws, without.aws),
    };
    const perViewerMinute = show(
      '4. a viewer on a running deployment’s log stream',
      viewer,
      0.5,
      'viewer-min',
      wsMessageMs,
    );

    // The money, per month and per unit
    const perMinute = idlePerAgentMinute.total / idlePerAgentMinute.per;
    const connectionPerMinute =
      (idlePerAgentMinute.connectionMinutes / idlePerAgentMinute.per) * PRICE.wsConnectionMinute;
    const idleMonth =
      TRANSPORT === 'websocket'
        ? // the connection itself; its pings at the production cadence; a reconnect every 2 hours (API Gateway's limit)
          connectionPerMinute * MINUTES_PER_MONTH +
          (perMinute - connectionPerMinute) * (IDLE_PING_SECONDS / PRODUCTION_IDLE_PING_SECONDS) * MINUTES_PER_MONTH +
          (perConnect.total / perConnect.per) * 360
        : perMinute * MINUTES_PER_MONTH;
    console.log('\n   In money (us-east-1 list prices; docs/cost.md)');
    console.log(`   an idle agent, per month (${TRANSPORT}): $${idleMonth.toFixed(4)}`);
    for (const [label, cost] of requestCosts) console.log(`   1 million ${label}: $${(cost * 1e6).toFixed(2)}`);
    console.log(`   one deployment of one command on ${N} targets: $${perDeployment.total.toFixed(6)}`);
    console.log(`   one minute of a log-stream viewer: $${(perViewerMinute.total / perViewerMinute.per).toFixed(6)}`);
  } finally {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack?.stop();
    await gateway.stop();
    await proxy.stop();
    await sqs.stop();
    await dynamo.stop();
    await rm(dir, { recursive: true, force: true });
  }
};

await runBench(main);
