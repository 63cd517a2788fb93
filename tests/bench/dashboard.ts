// Benchmark (figures printed, nothing asserted): what one open resource stream reads, on a table of N deployments.
// Run with `npm run bench:dashboard [-- N]` (default 10,000).
//
// The stack runs behind a counting proxy (aws-counter.ts), so every DynamoDB call of every function is counted with
// the items it answered. N deployments are written straight into the table; then the stack's own background reads
// are measured with nobody watching, then with one `GET /api/v1/sse/deployments` open and idle, then while 10
// deployments a second change (the stream must report each as an update). The stream's figure is the difference.
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { BatchWriteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { deploymentItem } from '../../infra/dynamodb/deployment-repository.js';
import { LOCAL_CREDENTIALS, startDynamo, startSqs } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack } from '../../local/stack.js';
import { aDeployment } from '../fakes/deployments.js';
import { Counter, difference, startCountingProxy, type Tally } from './aws-counter.js';
import { printResults, type Figure } from './results.js';
import { runBench, signedIn } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const N = Number(process.argv[2] ?? 10_000);
if (!Number.isInteger(N) || N < 1 || N > 100_000) throw new Error(`N must be 1 to 100000 (got ${process.argv[2]})`);
const WINDOW_MS = 20_000;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const itemsPerSecond = (tallies: Map<string, Tally>, ms: number) => {
  let items = 0;
  let calls = 0;
  for (const [key, tally] of tallies)
    if (key.startsWith('dynamodb ') && /GetItem|Query|Scan|BatchGetItem/.test(key)) {
      items += tally.items;
      calls += tally.calls;
    }
  return { items: items / (ms / 1000), calls: calls / (ms / 1000) };
};

const main = async () => {
  console.log(
    `Idle dashboard: one resource stream on ${N} deployments (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const counter = new Counter();
  const dynamo = await startDynamo({ port: await freePort() });
  const sqs = await startSqs({ port: await freePort() });
  const proxy = await startCountingProxy(dynamo, sqs, counter);
  process.env['AWS_ENDPOINT_URL'] = proxy.endpoint;
  let stack: Stack | undefined;
  const figures: Figure[] = [];
  const stream = new AbortController();
  const direct = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  try {
    stack = await startStack({
      port: 0,
      namePrefix: `bench-dash-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
    });
    const table = stack.tables['MainTable']!;
    const { baseUrl, call } = await signedIn(stack, ADMIN);

    // Prepare: N finished deployments, written straight into the table (not counted: not through the proxy)
    const seeded = Date.now();
    const deployments = Array.from({ length: N }, (_, i) =>
      aDeployment({
        id: randomUUID(),
        shortId: `b${i}`,
        state: 'success',
        createdAt: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
      }),
    );
    for (let i = 0; i < deployments.length; i += 25) {
      let request: Record<string, { PutRequest: { Item: Record<string, unknown> } }[]> | undefined = {
        [table]: deployments.slice(i, i + 25).map((d) => ({ PutRequest: { Item: deploymentItem(d) } })),
      };
      while (request !== undefined && Object.keys(request).length > 0) {
        const answer = await direct.send(new BatchWriteCommand({ RequestItems: request }));
        request = answer.UnprocessedItems as typeof request;
      }
    }
    console.log(`   ${N} deployments written in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
    await sleep(5_000);

    // 1. Nobody watching: the stack's own background reads
    let before = counter.snapshot();
    await sleep(WINDOW_MS);
    const idleStack = itemsPerSecond(difference(counter.snapshot(), before), WINDOW_MS);

    // 2. One stream open, nothing changing
    const { sse_token: sseToken } = (await call('POST', '/auth/sse-token', {})) as { sse_token: string };
    const opened = Date.now();
    const response = await fetch(`${baseUrl}/api/v1/sse/deployments?sse_token=${sseToken}`, {
      signal: stream.signal,
    });
    if (response.status !== 200 || response.body === null) throw new Error(`the stream answered ${response.status}`);
    const frames: string[] = [];
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        const parts = buffer.split('\n\n');
        buffer = parts.pop() ?? '';
        frames.push(...parts);
      }
    })().catch(() => undefined);
    await sleep(5_000);
    console.log(`   stream open after ${Date.now() - opened} ms (its first listing read the whole table once)`);
    before = counter.snapshot();
    await sleep(WINDOW_MS);
    const idleStream = itemsPerSecond(difference(counter.snapshot(), before), WINDOW_MS);

    // 3. Ten deployments a second change (written straight into the table, as the engine would)
    const updatesBefore = frames.filter((f) => f.includes('"event":"updated"')).length;
    before = counter.snapshot();
    const started = Date.now();
    let changed = 0;
    for (let second = 0; second < 10; second += 1) {
      for (let k = 0; k < 10; k += 1) {
        const d = deployments[(second * 10 + k) % deployments.length]!;
        await direct.send(
          new PutCommand({
            TableName: table,
            Item: deploymentItem({ ...d, durationMs: 60_000 + second * 1000 + k, revision: d.revision + 1 }),
          }),
        );
        changed += 1;
      }
      await sleep(Math.max(0, started + (second + 1) * 1000 - Date.now()));
    }
    await sleep(3_000);
    const busyMs = Date.now() - started;
    const busy = itemsPerSecond(difference(counter.snapshot(), before), busyMs);
    const updates = frames.filter((f) => f.includes('"event":"updated"')).length - updatesBefore;

    // Assess
    const stream1 = (a: { items: number }, b: { items: number }) => Math.max(0, a.items - b.items);
    console.log(`\n   ${'figure'.padEnd(62)} ${'before'.padStart(14)} ${'now'.padStart(10)}`);
    const row = (label: string, was: string, now: string) =>
      console.log(`   ${label.padEnd(62)} ${was.padStart(14)} ${now.padStart(10)}`);
    row('items read per second, the stack alone (nobody watching)', '-', idleStack.items.toFixed(1));
    row(
      `items read per second by one idle stream (${N} deployments)`,
      `${N} (all)`,
      stream1(idleStream, idleStack).toFixed(1),
    );
    row(
      'DynamoDB reads per second by one idle stream',
      '~1 (paged)',
      Math.max(0, idleStream.calls - idleStack.calls).toFixed(1),
    );
    row(
      'items read per second by the stream, 10 deployments changing/s',
      `${N} (all)`,
      stream1(busy, idleStack).toFixed(1),
    );
    row(`updates the stream reported for the ${changed} changes`, '-', String(updates));
    figures.push(
      {
        bench: 'dashboard',
        name: `items read/s by one idle stream, ${N} deployments`,
        value: stream1(idleStream, idleStack),
        unit: 'items/s',
        goal: '',
      },
      {
        bench: 'dashboard',
        name: `items read/s by one stream, 10 changing/s, ${N} deployments`,
        value: stream1(busy, idleStack),
        unit: 'items/s',
        goal: '',
      },
      {
        bench: 'dashboard',
        name: 'changes not reported by the stream',
        value: Math.max(0, changed - updates),
        unit: 'count',
        goal: '0',
      },
    );
  } finally {
    stream.abort();
    direct.destroy();
    await stack?.stop();
    await proxy.stop();
    await sqs.stop();
    await dynamo.stop();
  }
  printResults(figures);
};

await runBench(main);
