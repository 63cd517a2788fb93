// Benchmark (figures printed, nothing asserted): how many AWS operations the service makes, per API request, per
// deployment and per idle minute, measured through a counting proxy in front of the emulators. The figures feed
// docs/cost.md. Run with `npm run bench:aws-ops [-- IDLE_SECONDS]` (default 60).
//
// The proxy is the stack's single AWS endpoint (AWS_ENDPOINT_URL, as for LocalStack): it forwards DynamoDB calls
// (`X-Amz-Target: DynamoDB_20120810.*`) to DynamoDB Local and SQS calls (`AmazonSQS.*`) to the SQS emulator, and
// counts each call by operation, with the items a transaction writes and the bytes each read answers (read units
// are estimated from those bytes: 4 KB per unit, strongly consistent; a transaction item counts twice).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningAgent } from '../../agent/agent.js';
import { startLocalAgents } from '../../local/agents.js';
import { startDynamo, startSqs, type Emulator } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack } from '../../local/stack.js';
import { runBench, signedIn } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const IDLE_SECONDS = Number(process.argv[2] ?? 60);
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

interface Tally {
  calls: number;
  /** Write request units (estimated: 1 per item written, 2 per transaction item). */
  wru: number;
  /** Read request units (estimated from the answer's size: 4 KB a unit). */
  rru: number;
}

/** Counts by service and operation (e.g. `dynamodb GetItem`, `sqs ReceiveMessage`). */
class Counter {
  readonly byOperation = new Map<string, Tally>();

  record(service: string, operation: string, body: string, answerBytes: number): void {
    const key = `${service} ${operation}`;
    const tally = this.byOperation.get(key) ?? { calls: 0, wru: 0, rru: 0 };
    tally.calls += 1;
    if (service === 'dynamodb') {
      const parsed = JSON.parse(body || '{}') as {
        TransactItems?: unknown[];
        RequestItems?: Record<string, unknown[]>;
      };
      if (operation === 'TransactWriteItems') tally.wru += 2 * (parsed.TransactItems?.length ?? 0);
      else if (operation === 'BatchWriteItem')
        tally.wru += Object.values(parsed.RequestItems ?? {}).reduce((n, items) => n + items.length, 0);
      else if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation)) tally.wru += 1;
      else if (operation === 'TransactGetItems') tally.rru += 2 * (parsed.TransactItems?.length ?? 0);
      else if (['GetItem', 'Query', 'Scan', 'BatchGetItem'].includes(operation))
        tally.rru += Math.max(1, Math.ceil(answerBytes / 4096));
    }
    this.byOperation.set(key, tally);
  }

  snapshot(): Map<string, Tally> {
    return new Map([...this.byOperation].map(([k, v]) => [k, { ...v }]));
  }
}

const difference = (after: Map<string, Tally>, before: Map<string, Tally>): Map<string, Tally> => {
  const out = new Map<string, Tally>();
  for (const [key, tally] of after) {
    const was = before.get(key) ?? { calls: 0, wru: 0, rru: 0 };
    if (tally.calls > was.calls)
      out.set(key, { calls: tally.calls - was.calls, wru: tally.wru - was.wru, rru: tally.rru - was.rru });
  }
  return out;
};

const startCountingProxy = async (dynamo: Emulator, sqs: Emulator, counter: Counter) => {
  const port = await freePort();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = String(req.headers['x-amz-target'] ?? '');
      const [prefix, operation = 'unknown'] = target.split('.');
      const toDynamo = prefix?.startsWith('DynamoDB') ?? false;
      const upstream = new URL(toDynamo ? dynamo.endpoint : sqs.endpoint);
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: `127.0.0.1:${port}` },
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            // Queue URLs name the emulator's own address: point them at the proxy, so every later SQS call (the SDK
            // sends each to its queue URL's host) is counted too.
            const raw = Buffer.concat(parts);
            const bytes = toDynamo
              ? raw
              : Buffer.from(raw.toString('utf8').replaceAll(new URL(sqs.endpoint).host, `127.0.0.1:${port}`));
            counter.record(
              toDynamo ? 'dynamodb' : 'sqs',
              target === '' ? `${req.method} (query protocol)` : operation,
              body.toString('utf8'),
              bytes.length,
            );
            res.writeHead(answer.statusCode ?? 500, { ...answer.headers, 'content-length': String(bytes.length) });
            res.end(bytes);
          });
        },
      );
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => new Promise<void>((done) => server.close(() => done())) };
};

const table = (title: string, tallies: Map<string, Tally>, per: number, unit: string) => {
  console.log(`\n   ${title}`);
  console.log(
    `   ${'operation'.padEnd(34)} ${`calls/${unit}`.padStart(14)} ${`WRU/${unit}`.padStart(12)} ${`RRU/${unit}`.padStart(12)}`,
  );
  const rows = [...tallies].sort(([a], [b]) => a.localeCompare(b));
  let calls = 0;
  let wru = 0;
  let rru = 0;
  for (const [operation, tally] of rows) {
    calls += tally.calls;
    wru += tally.wru;
    rru += tally.rru;
    console.log(
      `   ${operation.padEnd(34)} ${(tally.calls / per).toFixed(2).padStart(14)} ${(tally.wru / per).toFixed(2).padStart(12)} ${(tally.rru / per).toFixed(2).padStart(12)}`,
    );
  }
  if (rows.length === 0) console.log('   (none)');
  console.log(
    `   ${'total'.padEnd(34)} ${(calls / per).toFixed(2).padStart(14)} ${(wru / per).toFixed(2).padStart(12)} ${(rru / per).toFixed(2).padStart(12)}`,
  );
};

const main = async () => {
  console.log(
    `AWS operations through a counting proxy (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-ops-'));
  const counter = new Counter();
  const dynamo = await startDynamo({ port: await freePort() });
  const sqs = await startSqs({ port: await freePort() });
  const proxy = await startCountingProxy(dynamo, sqs, counter);
  process.env['AWS_ENDPOINT_URL'] = proxy.endpoint;
  let stack: Stack | undefined;
  let agents: readonly RunningAgent[] = [];
  try {
    stack = await startStack({ port: 0, namePrefix: `bench-ops-${randomUUID().slice(0, 8)}-`, bootstrapAdmin: ADMIN });
    const { baseUrl, call } = await signedIn(stack, ADMIN);
    agents = await startLocalAgents({ ...stack, dynamoEndpoint: dynamo.endpoint }, dir, () => undefined);
    const action = await call('POST', '/actions', {
      slug: 'echo',
      name: 'Echo',
      version: { version: '1.0.0', script: 'echo ok' },
    });
    await sleep(3000); // start-up traffic settles

    // 1. Idle: the service with its two agents and nobody calling
    let before = counter.snapshot();
    await sleep(IDLE_SECONDS * 1000);
    table(
      `1. idle, two agents connected, no client (${IDLE_SECONDS} s), per minute`,
      difference(counter.snapshot(), before),
      IDLE_SECONDS / 60,
      'min',
    );

    // 2. Requests: each measured over N calls, agents' background traffic subtracted by measuring it alone
    const N = 20;
    const background = async (millis: number) => {
      const at = counter.snapshot();
      await sleep(millis);
      return difference(counter.snapshot(), at);
    };
    const idlePerMs = await background(5000);
    const perRequest = async (label: string, fn: () => Promise<unknown>) => {
      const at = counter.snapshot();
      const started = Date.now();
      for (let i = 0; i < N; i += 1) await fn();
      const elapsed = Date.now() - started;
      const measured = difference(counter.snapshot(), at);
      for (const [key, idle] of idlePerMs) {
        const tally = measured.get(key);
        if (tally === undefined) continue;
        const share = elapsed / 5000;
        tally.calls = Math.max(0, tally.calls - Math.round(idle.calls * share));
        tally.wru = Math.max(0, tally.wru - idle.wru * share);
        tally.rru = Math.max(0, tally.rru - idle.rru * share);
        if (tally.calls === 0) measured.delete(key);
      }
      table(`2. ${label}, per request (${N} requests, agents' idle traffic subtracted)`, measured, N, 'req');
    };
    await perRequest('GET /server/info', () => call('GET', '/server/info'));
    await perRequest('GET /auth/me', () => call('GET', '/auth/me'));
    await perRequest('GET /deployments', () => call('GET', '/deployments'));
    await perRequest('GET /targets', () => call('GET', '/targets'));

    // 3. One deployment of one `echo` on one target, from create to its final state
    before = counter.snapshot();
    const K = 5;
    for (let i = 0; i < K; i += 1) {
      const created = await call('POST', '/deployments', {
        action_id: action.id,
        target_tags: [{ key: 'role', value: 'web' }],
      });
      for (
        const until = Date.now() + 60_000;
        !['success', 'failed'].includes((await call('GET', `/deployments/${created.deployment_id}`)).state);
        await sleep(250)
      ) {
        if (Date.now() > until) throw new Error('the deployment did not finish within 60 s');
      }
    }
    await sleep(12_000); // the engine's periodic check after the end, the agents' acknowledgements
    table(
      `3. a one-command deployment, create to success, with the client's status polls and the agents' traffic (${K} runs), per deployment`,
      difference(counter.snapshot(), before),
      K,
      'dep',
    );

    // 4. An open dashboard stream on a table of deployments
    const sse = (await call('POST', '/auth/sse-token')).sse_token as string;
    const stream = await fetch(`${baseUrl}/api/v1/sse/deployments?sse_token=${sse}`);
    await sleep(2000);
    before = counter.snapshot();
    await sleep(20_000);
    table(
      `4. one open GET /sse/deployments with ${K + 0} deployments stored, per minute (20 s measured)`,
      difference(counter.snapshot(), before),
      20 / 60,
      'min',
    );
    await stream.body?.cancel();
  } finally {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack?.stop();
    await proxy.stop();
    await sqs.stop();
    await dynamo.stop();
    await rm(dir, { recursive: true, force: true });
  }
};

await runBench(main);
