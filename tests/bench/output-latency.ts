// Benchmark (figures printed, nothing asserted): how long a line a command prints takes to reach a live-stream
// client. Run with `npm run bench:output [-- LINES [INTERVAL_MS] [before]]` (defaults 200 lines, 15 ms apart;
// `before`: the log stream's timing before issue 36, no backoff while quiet, for A/B runs: stream-timing.ts).
//
// A local stack with local-1 and local-2 (in this process) runs an action on local-1 whose node script prints
// LINES lines, each holding its own Date.now(). A client reads GET /deployments/{id}/logs?sse_token= with fetch and,
// for every `log` event, takes the time the frame arrived minus the time printed in the line. Every clock is this
// host's, so the difference is the real latency. The path of a line and what it costs:
//   script stdout -> agent: batched, one POST .../output at most every 50 ms (agent/output.ts BATCH_INTERVAL_MS)
//     -> output handler: one `log` event per line appended to the deployment's event store (`log.timestamp` is
//        that moment, so the figures split at it)
//     -> stream handler: polls the store every 100 ms -> the front -> this client.
// Two 100 ms periods, each waited half on average: expect 100-250 ms, at most about 0.2 s plus the HTTP hops
// (more on a loaded machine: the stream runner, the SQS pollers and the agents share this process's event loop).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { printResults, type Figure } from './results.js';
import { streamHandlerBefore } from './stream-timing.js';
import { runBench, signedIn } from './support.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const LINES = Number(process.argv[2] ?? 200);
const INTERVAL_MS = Number(process.argv[3] ?? 15);
const BEFORE = process.argv[4] === 'before';
/** The script waits this long before its first line, so the stream is open before anything is printed. */
const LEAD_IN_MS = 3000;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };

const row = (label: string, samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(0)} ms`.padStart(9);
  return `   ${label.padEnd(40)} ${String(sorted.length).padStart(5)} ${f(sorted[0] ?? NaN)} ${f(percentile(sorted, 50))} ${f(percentile(sorted, 95))} ${f(sorted.at(-1) ?? NaN)}`;
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Reads an SSE response to its end, calling `onMessage` with each data frame and the time its bytes arrived. */
const readStream = async (
  response: Response,
  onMessage: (message: { event: string; data: Record<string, unknown> }, receivedAt: number) => void,
) => {
  if (response.body === null) throw new Error('the stream has no body');
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body) {
    const receivedAt = Date.now();
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split('\n').find((line) => line.startsWith('data: '));
      if (data !== undefined) onMessage(JSON.parse(data.slice(6)), receivedAt);
    }
  }
};

const main = async () => {
  console.log(
    `Agent output -> SSE client latency: ${LINES} lines, ${INTERVAL_MS} ms apart, from local-1${BEFORE ? ', log stream timing before issue 36' : ''} (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const startedAt = performance.now();
  const figures: Figure[] = [];
  let stack: Stack | undefined;
  let agents: readonly LocalAgent[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-output-'));
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
      namePrefix: `bench-output-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
      ...(BEFORE ? { streamHandler: await streamHandlerBefore() } : {}),
    });
    const { baseUrl, call } = await signedIn(stack, ADMIN);
    const agentLog: string[] = [];
    agents = await startLocalAgents(stack, dir, (line) => agentLog.push(line));

    const script = `setTimeout(() => {
  let i = 0;
  const tick = () => {
    console.log('line ' + i + ' ' + Date.now());
    i += 1;
    if (i < ${LINES}) setTimeout(tick, ${INTERVAL_MS});
  };
  tick();
}, ${LEAD_IN_MS});`;
    const action = await call('POST', '/actions', {
      slug: 'print-times',
      name: 'Print times',
      version: { version: '1.0.0', interpreter: 'node', script },
    });
    if (typeof action.id !== 'string') throw new Error(`POST /actions answered ${JSON.stringify(action)}`);
    const created = await call('POST', '/deployments', {
      action_id: action.id,
      target_tags: [{ key: 'role', value: 'web' }],
    });
    const deploymentId = created.deployment_id as string;
    const sse = (await call('POST', '/auth/sse-token', {})).sse_token as string;

    const endToEnd: number[] = [];
    const toStore: number[] = [];
    const storeToClient: number[] = [];
    let finalState = '';
    const response = await fetch(`${baseUrl}/api/v1/deployments/${deploymentId}/logs?sse_token=${sse}`, {
      signal: AbortSignal.timeout(LEAD_IN_MS + LINES * INTERVAL_MS * 4 + 120_000),
    });
    if (response.status !== 200) throw new Error(`the stream answered ${response.status}: ${await response.text()}`);
    await readStream(response, (message, receivedAt) => {
      if (message.event === 'state_change') finalState = String(message.data['new_state']);
      if (message.event !== 'log') return;
      const log = message.data['log'] as { message: string; timestamp: string };
      const printed = /^line \d+ (\d+)$/.exec(log.message);
      if (printed === null) return;
      const printedAt = Number(printed[1]);
      const storedAt = Date.parse(log.timestamp);
      endToEnd.push(receivedAt - printedAt);
      toStore.push(storedAt - printedAt);
      storeToClient.push(receivedAt - storedAt);
    });

    console.log(`\n   deployment ${deploymentId} ended ${finalState}; ${endToEnd.length} of ${LINES} lines received`);
    console.log(
      `   ${'latency of a line'.padEnd(40)} ${'count'.padStart(5)} ${['min', 'p50', 'p95', 'max'].map((h) => h.padStart(9)).join(' ')}`,
    );
    console.log(row('printed -> SSE client (end to end)', endToEnd));
    console.log(row('printed -> stored (agent batch, POST)', toStore));
    console.log(row('stored -> SSE client (store poll)', storeToClient));
    const sorted = [...endToEnd].sort((a, b) => a - b);
    figures.push(
      { bench: 'output', name: 'output -> SSE client p50', value: percentile(sorted, 50), unit: 'ms', goal: '' },
      { bench: 'output', name: 'output -> SSE client p95', value: percentile(sorted, 95), unit: 'ms', goal: '' },
      { bench: 'output', name: 'output -> SSE client max', value: sorted.at(-1) ?? NaN, unit: 'ms', goal: '' },
      { bench: 'output', name: 'lines lost', value: LINES - endToEnd.length, unit: 'count', goal: '0' },
    );
    console.log('   (stored = log.timestamp, written when the output request was handled: millisecond resolution)');
    const problems = agentLog.filter((line) => /error|fail|refused|retry/i.test(line));
    if (problems.length > 0)
      console.log(`   agent log lines about problems: ${problems.length}, e.g. ${problems.slice(0, 3).join(' | ')}`);
  } finally {
    await stopEverything();
    const left = (stack?.childPids ?? []).filter(alive);
    console.log(`   stopped; child processes left: ${left.length === 0 ? 'none' : left.join(', ')}`);
  }
  console.log(`\n   whole run (stack start included): ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
  printResults(figures.filter((f) => Number.isFinite(f.value)));
};

await runBench(main);
