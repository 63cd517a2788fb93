// Benchmark (figures printed, nothing asserted): how many AWS operations the service makes, per API request, per
// deployment and per idle minute, measured through a counting proxy in front of the emulators. The figures feed
// docs/cost.md. Run with `npm run bench:aws-ops [-- IDLE_SECONDS]` (default 60).
//
// The proxy is the stack's single AWS endpoint (AWS_ENDPOINT_URL, as for LocalStack): it forwards DynamoDB calls
// (`X-Amz-Target: DynamoDB_20120810.*`) to DynamoDB Local and SQS calls (`AmazonSQS.*`) to the SQS emulator, and
// counts each call by operation, with the items a transaction writes and the bytes each read answers (read units
// are estimated from those bytes: 4 KB per unit, strongly consistent; a transaction item counts twice).
import { cpus, loadavg } from 'node:os';
import { difference, withCountedStack, type Tally } from './aws-counter.js';
import { printResults, type Figure } from './results.js';
import { runBench } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const IDLE_SECONDS = Number(process.argv[2] ?? 60);
const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

const WRITES = /^dynamodb (PutItem|UpdateItem|DeleteItem|TransactWriteItems|BatchWriteItem)$/;
/** Calls in some tallies: all of them, DynamoDB writes among them. */
const callsIn = (tallies: Map<string, Tally>) => {
  let calls = 0;
  let writes = 0;
  for (const [operation, tally] of tallies) {
    calls += tally.calls;
    if (WRITES.test(operation)) writes += tally.calls;
  }
  return { calls, writes };
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
  const figures: Figure[] = [];
  await withCountedStack({ name: 'ops', admin: ADMIN }, async ({ counter, baseUrl, call }) => {
    const action = await call('POST', '/actions', {
      slug: 'echo',
      name: 'Echo',
      version: { version: '1.0.0', script: 'echo ok' },
    });
    await sleep(3000); // start-up traffic settles

    // 1. Idle: the service with its two agents and nobody calling
    let before = counter.snapshot();
    await sleep(IDLE_SECONDS * 1000);
    const idle = difference(counter.snapshot(), before);
    table(`1. idle, two agents connected, no client (${IDLE_SECONDS} s), per minute`, idle, IDLE_SECONDS / 60, 'min');
    figures.push({
      bench: 'aws-ops',
      name: 'AWS calls per idle minute, two agents',
      value: callsIn(idle).calls / (IDLE_SECONDS / 60),
      unit: 'ops',
      goal: '',
    });

    // 2. Requests: each measured over N calls, agents' background traffic subtracted by measuring it alone
    const N = 100;
    const PACE_MS = 20; // 50 requests a second at most
    const background = async (millis: number) => {
      const at = counter.snapshot();
      await sleep(millis);
      return difference(counter.snapshot(), at);
    };
    const idlePerMs = await background(5000);
    const perRequest = async (label: string, fn: () => Promise<unknown>) => {
      const at = counter.snapshot();
      const started = Date.now();
      // Paced under the general rate limit (100/s): a client at its limit takes one token per request, one write
      // each, by design (domain/identity/rate-gate.ts); back to back, the fast routes ran at 200-300/s and did.
      for (let i = 0; i < N; i += 1) {
        await fn();
        await sleep(started + (i + 1) * PACE_MS - Date.now());
      }
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
      table(
        `2. ${label}, per request (${N} requests at up to ${1000 / PACE_MS}/s, agents' idle traffic subtracted)`,
        measured,
        N,
        'req',
      );
      const { calls, writes } = callsIn(measured);
      readOnly.push({ label, calls: calls / N, writes: writes / N });
    };
    const readOnly: { label: string; calls: number; writes: number }[] = [];
    await perRequest('GET /server/info', () => call('GET', '/server/info'));
    await perRequest('GET /auth/me', () => call('GET', '/auth/me'));
    await perRequest('GET /deployments', () => call('GET', '/deployments'));
    await perRequest('GET /targets', () => call('GET', '/targets'));
    figures.push({
      bench: 'aws-ops',
      name: 'writes per read-only request',
      value: readOnly.reduce((n, r) => n + r.writes, 0) / readOnly.length,
      unit: 'count',
      goal: '≤ 0.1',
    });
    for (const { label, calls } of readOnly)
      figures.push({ bench: 'aws-ops', name: `AWS calls per ${label}`, value: calls, unit: 'ops', goal: '' });

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
    const deployments = difference(counter.snapshot(), before);
    table(
      `3. a one-command deployment, create to success, with the client's status polls and the agents' traffic (${K} runs), per deployment`,
      deployments,
      K,
      'dep',
    );
    figures.push({
      bench: 'aws-ops',
      name: 'AWS calls per one-command deployment',
      value: callsIn(deployments).calls / K,
      unit: 'ops',
      goal: '',
    });

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
  });
  printResults(figures);
};

await runBench(main);
