// Benchmark (figures printed, nothing asserted): how long a line a command prints takes to reach a viewer on the
// WebSocket channel (issue 36), beside an SSE client of the same run; the stack's first deployment (cold) and its
// second (warm) in turn. Run with
//   npm run bench:viewer-latency [-- LINES [INTERVAL_MS]]   (defaults 200 lines, 15 ms apart)
//
// As output-latency.ts: local-1 runs a node script that prints LINES lines, each holding its Date.now(). Two clients
// watch the deployment: a `ws` viewer subscribed on the channel (the line reaches it pushed by the output handler
// that stored it) and an SSE client of GET /deployments/{id}/logs (which polls the store). Each takes, per `log`
// event, the time its frame arrived minus the time printed in the line: every clock is this host's. Goals: WebSocket
// p95 ≤ 100 ms, SSE p95 ≤ 250 ms.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startStack, type Stack } from '../../local/stack.js';
import { printResults, type Figure } from './results.js';
import { runBench, signedIn } from './support.js';
import { openViewer } from './viewer-client.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const LINES = Number(process.argv[2] ?? 200);
const INTERVAL_MS = Number(process.argv[3] ?? 15);
const LEAD_IN_MS = 3000;
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };

const row = (label: string, samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(0)} ms`.padStart(9);
  return `   ${label.padEnd(34)} ${String(sorted.length).padStart(5)} ${f(sorted[0] ?? NaN)} ${f(percentile(sorted, 50))} ${f(percentile(sorted, 95))} ${f(sorted.at(-1) ?? NaN)}`;
};

/** The printed and stored (log.timestamp) times of a `log` event's line, undefined for any other event. */
const timesOf = (message: { event?: unknown; data?: unknown }) => {
  if (message.event !== 'log') return undefined;
  const log = (message.data as { log?: { message?: string; timestamp?: string } }).log;
  const printed = /^line \d+ (\d+)$/.exec(log?.message ?? '');
  return printed === null ? undefined : { printed: Number(printed[1]), stored: Date.parse(log?.timestamp ?? '') };
};

/** Reads an SSE response to its end, calling `onMessage` with each data frame and the time its bytes arrived. */
const readSse = async (response: Response, onMessage: (message: Record<string, unknown>, at: number) => void) => {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body ?? []) {
    const receivedAt = Date.now();
    buffer += decoder.decode(bytes as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .find((line) => line.startsWith('data: '));
      buffer = buffer.slice(end + 2);
      if (data !== undefined) onMessage(JSON.parse(data.slice(6)), receivedAt);
    }
  }
};

/** The latencies of one deployment's lines, per client. */
interface Samples {
  readonly ws: number[];
  readonly sse: number[];
  readonly wsFromStore: number[];
  readonly sseFromStore: number[];
}

/** One deployment of the action, watched by a WebSocket viewer and an SSE client side by side until it ends. */
const watchOne = async (
  baseUrl: string,
  call: Awaited<ReturnType<typeof signedIn>>['call'],
  actionId: string,
): Promise<Samples> => {
  const created = await call('POST', '/deployments', {
    action_id: actionId,
    target_tags: [{ key: 'role', value: 'web' }],
  });
  const deploymentId = created.deployment_id as string;
  const samples: Samples = { ws: [], sse: [], wsFromStore: [], sseFromStore: [] };
  const viewer = await openViewer(baseUrl, call);
  let wsEnded: () => void = () => undefined;
  const wsDone = new Promise<void>((resolve) => (wsEnded = resolve));
  viewer.onFrame((frame, receivedAt) => {
    if (frame.type !== 'events') return;
    for (const event of frame['events'] as { event: string; data: Record<string, unknown> }[]) {
      const at = timesOf(event);
      if (at !== undefined) samples.ws.push(receivedAt - at.printed);
      if (at !== undefined) samples.wsFromStore.push(receivedAt - at.stored);
      if (event.event === 'state_change' && ['success', 'failed'].includes(String(event.data['new_state']))) wsEnded();
    }
  });
  await viewer.request({ action: 'subscribe', topic: 'deployment', deployment_id: deploymentId }, 'subscribed');
  const sseToken = (await call('POST', '/auth/sse-token', {})).sse_token as string;
  const response = await fetch(`${baseUrl}/api/v1/deployments/${deploymentId}/logs?sse_token=${sseToken}`, {
    signal: AbortSignal.timeout(LEAD_IN_MS + LINES * INTERVAL_MS * 4 + 120_000),
  });
  if (response.status !== 200) throw new Error(`the stream answered ${response.status}`);
  await readSse(response, (message, receivedAt) => {
    const at = timesOf(message);
    if (at !== undefined) samples.sse.push(receivedAt - at.printed);
    if (at !== undefined) samples.sseFromStore.push(receivedAt - at.stored);
  });
  await Promise.race([wsDone, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  await viewer.close();
  return samples;
};

const p = (samples: readonly number[], q: number) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    q,
  );

/** The rows and figures of one round (`cold`: the stack's first deployment; `warm`: the next one). */
const report = (round: 'cold' | 'warm', samples: Samples): Figure[] => {
  const { ws, sse, wsFromStore, sseFromStore } = samples;
  console.log(
    `\n   ${`${round}: latency of a line, printed ->`.padEnd(34)} ${'count'.padStart(5)} ${['min', 'p50', 'p95', 'max'].map((h) => h.padStart(9)).join(' ')}`,
  );
  console.log(row('WebSocket viewer (pushed)', ws));
  console.log(row('SSE client (polled)', sse));
  console.log(row('stored -> WebSocket viewer', wsFromStore));
  console.log(row('stored -> SSE client', sseFromStore));
  const name = (what: string) => `${what}, ${round}`;
  const goal = (text: string) => (round === 'warm' ? text : '');
  return [
    { bench: 'viewer-latency', name: name('output -> WebSocket viewer p50'), value: p(ws, 50), unit: 'ms', goal: '' },
    {
      bench: 'viewer-latency',
      name: name('output -> WebSocket viewer p95'),
      value: p(ws, 95),
      unit: 'ms',
      goal: goal('≤ 100 ms'),
    },
    { bench: 'viewer-latency', name: name('output -> SSE client p50'), value: p(sse, 50), unit: 'ms', goal: '' },
    {
      bench: 'viewer-latency',
      name: name('output -> SSE client p95'),
      value: p(sse, 95),
      unit: 'ms',
      goal: goal('≤ 250 ms'),
    },
    {
      bench: 'viewer-latency',
      name: name('stored -> WebSocket viewer p95'),
      value: p(wsFromStore, 95),
      unit: 'ms',
      goal: '',
    },
    {
      bench: 'viewer-latency',
      name: name('stored -> SSE client p95'),
      value: p(sseFromStore, 95),
      unit: 'ms',
      goal: '',
    },
    {
      bench: 'viewer-latency',
      name: name('lines lost (WebSocket)'),
      value: LINES - ws.length,
      unit: 'count',
      goal: '0',
    },
    { bench: 'viewer-latency', name: name('lines lost (SSE)'), value: LINES - sse.length, unit: 'count', goal: '0' },
  ];
};

const main = async () => {
  console.log(
    `Agent output -> viewer latency, WebSocket channel and SSE side by side: ${LINES} lines, ${INTERVAL_MS} ms apart, two deployments on one stack (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  const figures: Figure[] = [];
  let stack: Stack | undefined;
  let agents: readonly LocalAgent[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-viewer-'));
  try {
    stack = await startStack({
      port: 0,
      namePrefix: `bench-viewer-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: ADMIN,
      // As `npm start` runs it: every function called once before the stack answers.
      warm: true,
    });
    const { baseUrl, call } = await signedIn(stack, ADMIN);
    agents = await startLocalAgents(stack, dir, () => undefined);
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
    // The stack's first deployment meets code that has not run yet (its code paths' first calls, the JIT of the
    // node processes and of DynamoDB Local): its first few hundred ms of lines are slower. The second deployment
    // shows the running service; both are printed, the goals are the warm round's.
    figures.push(...report('cold', await watchOne(baseUrl, call, action.id as string)));
    figures.push(...report('warm', await watchOne(baseUrl, call, action.id as string)));
    console.log(
      '   (stored = log.timestamp, written when the output request was handled; printed -> stored is the agent)',
    );
  } finally {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  printResults(figures.filter((f) => Number.isFinite(f.value)));
};

await runBench(main);
