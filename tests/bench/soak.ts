// Benchmark (figures printed, nothing asserted): a soak of the local stack (issue 34). Run with
// `npm run bench:soak -- [minutes [seconds between creates]]` (default 30 and 10).
//
// One local stack with its two local agents. For the whole run: mixed authenticated API reads (auth/me,
// deployments, targets, server/info) at about 10 a second, a deployment on local-1 every 10 s, one open event
// stream (GET /sse/deployments, reopened if it ends), and one open log stream (GET /deployments/{id}/logs) that
// follows each new deployment to its end (a stream that ends without the deployment's terminal state_change is an
// error). Per minute: the resident memory (RSS, MB) of every long-lived
// process (this node process: the front, pollers and stream runner; serverless-offline's child; DynamoDB Local's
// JVM; the agents), the errors (non-2xx reads, failed creates, stream drops), and the read latency p50/p99. At the end:
// whether memory is flat (each process's last minute within 20 % of its second minute, the first being warm-up)
// and the p99 within 1.5 x the first minute's.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalAgents } from '../../local/agents.js';
import { startStack } from '../../local/stack.js';
import { apiClient } from '../support/http.js';
import { runBench } from './support.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
const MINUTES = Number(process.argv[2] ?? 30);
/** Seconds between two creates (default 10); a shorter gap grows the table faster (to see what grows with it). */
const CREATE_EVERY_MS = Number(process.argv[3] ?? 10) * 1000;
const READS = ['/auth/me', '/deployments?limit=20', '/targets?limit=20', '/server/info'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RSS in MB of a process and its children's tree is not summed: the process itself (VmRSS). */
const rssMb = async (pid: number | undefined): Promise<number | undefined> => {
  if (pid === undefined) return undefined;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
};

void runBench(async () => {
  const { logger } = await import('../../functions/shared/logger.js');
  logger.setLogLevel('CRITICAL');
  const stack = await startStack({ port: 0, bootstrapAdmin: ADMIN, warm: true });
  const dir = await mkdtemp(join(tmpdir(), 'deployer-soak-'));
  const agents = await startLocalAgents(stack, dir, () => undefined);
  const api = apiClient(() => stack.baseUrl);
  const token = (await api.login(ADMIN)).token;
  const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });
  const [dynamoPid, offlinePid] = stack.childPids;
  const processes: Record<string, number | undefined> = {
    'stack (node)': process.pid,
    'serverless-offline': offlinePid,
    'dynamodb-local (java)': dynamoPid,
    ...Object.fromEntries(agents.map((a, i) => [`agent local-${i + 1}`, a.pid])),
  };
  let stopped = false;
  const fresh = () => ({
    latencies: [] as number[],
    byPath: new Map<string, number[]>(),
    errors: 0,
    reads: 0,
    creates: 0,
    logs: 0,
  });
  let minute = fresh();
  /** What each error was (printed at the end, at most 20). */
  const why: string[] = [];
  const failed = (what: string) => {
    minute.errors += 1;
    if (why.length < 20) why.push(what);
  };
  try {
    const action = await call('POST', '/actions', {
      slug: 'soak-run',
      name: 'soak-run',
      version: { version: '1.0.0', script: 'echo soak; sleep 1; echo done' },
    });
    // The open event stream, reopened when it ends
    const stream = (async () => {
      while (!stopped) {
        try {
          const issued = await call('POST', '/auth/sse-token', {});
          const answer = await fetch(`${stack.baseUrl}/api/v1/sse/deployments?sse_token=${issued.json.sse_token}`);
          const reader = answer.body?.getReader();
          while (!stopped && reader !== undefined) if ((await reader.read()).done) break;
          await reader?.cancel().catch(() => undefined);
        } catch (error) {
          failed(`resource stream: ${String(error)}`);
        }
        if (!stopped) await sleep(1_000);
      }
    })();
    // The open log stream: the latest deployment's, followed to its end, then the next one's.
    let latest: string | undefined;
    const logs = (async () => {
      let followed: string | undefined;
      while (!stopped) {
        const id = latest;
        if (id === undefined || id === followed) {
          await sleep(200);
          continue;
        }
        followed = id;
        try {
          const issued = await call('POST', '/auth/sse-token', {});
          const answer = await fetch(
            `${stack.baseUrl}/api/v1/deployments/${id}/logs?sse_token=${issued.json.sse_token}`,
          );
          const text = answer.ok ? await answer.text() : '';
          if (/"new_state":"(success|failed|cancelled)"/.test(text)) minute.logs += 1;
          else if (!stopped)
            failed(`log stream of ${id}: ${answer.status}, no end in ${JSON.stringify(text.slice(-300))}`);
        } catch (error) {
          if (!stopped) failed(`log stream of ${id}: ${String(error)}`);
        }
      }
    })();
    const reads = (async () => {
      for (let i = 0; !stopped; i += 1) {
        const started = performance.now();
        const reply = await call('GET', READS[i % READS.length]!).catch(() => undefined);
        const took = performance.now() - started;
        minute.latencies.push(took);
        const path = READS[i % READS.length]!;
        minute.byPath.set(path, [...(minute.byPath.get(path) ?? []), took]);
        minute.reads += 1;
        if (reply === undefined || reply.status >= 300)
          failed(`GET ${READS[i % READS.length]!}: ${reply?.status ?? 'no answer'} ${reply?.text.slice(0, 200) ?? ''}`);
        await sleep(100);
      }
    })();
    const creates = (async () => {
      while (!stopped) {
        const reply = await call('POST', '/deployments', {
          action_id: action.json.id,
          target_tags: [{ key: 'role', value: 'web' }],
        }).catch(() => undefined);
        minute.creates += 1;
        if (reply === undefined || (reply.status !== 201 && reply.status !== 202))
          failed(`create: ${reply?.status ?? 'no answer'} ${reply?.text.slice(0, 200) ?? ''}`);
        else if (typeof reply.json?.deployment_id === 'string') latest = reply.json.deployment_id as string;
        await sleep(CREATE_EVERY_MS);
      }
    })();
    const rows: Record<string, number | string | undefined>[] = [];
    for (let m = 1; m <= MINUTES; m += 1) {
      await sleep(60_000);
      const done = minute;
      minute = fresh();
      const sorted = [...done.latencies].sort((a, b) => a - b);
      const row: Record<string, number | string | undefined> = {
        minute: m,
        reads: done.reads,
        creates: done.creates,
        log_streams: done.logs,
        errors: done.errors,
        p50_ms: Math.round(percentile(sorted, 50)),
        p99_ms: Math.round(percentile(sorted, 99)),
      };
      // Each read's own p99 (which one grows, when the whole does).
      for (const path of READS) {
        const own = [...(done.byPath.get(path) ?? [])].sort((a, b) => a - b);
        row[`${path.split('?')[0]} p99`] = Math.round(percentile(own, 99));
      }
      for (const [name, pid] of Object.entries(processes)) row[`${name} MB`] = await rssMb(pid);
      rows.push(row);
      console.log(`RESULT ${JSON.stringify({ bench: 'soak', ...row })}`);
    }
    stopped = true;
    await Promise.race([Promise.all([reads, creates, stream, logs]), sleep(15_000)]);
    console.table(rows);
    const base = rows[Math.min(1, rows.length - 1)]!;
    const last = rows.at(-1)!;
    const flat = Object.keys(processes).map((name) => {
      const a = Number(base[`${name} MB`]);
      const b = Number(last[`${name} MB`]);
      return { process: name, from_mb: a, to_mb: b, flat: Number.isNaN(a) || b <= a * 1.2 };
    });
    console.table(flat);
    for (const line of why) console.log(`error: ${line}`);
    // The issue's three criteria, each a PASS/FAIL line: p99 stays within (every minute, not only the last).
    const firstP99 = Number(rows[0]!['p99_ms']);
    const worst = rows.reduce((w, r) => (Number(r['p99_ms']) > Number(w['p99_ms']) ? r : w), rows[0]!);
    const errors = rows.reduce((n, r) => n + Number(r['errors']), 0);
    const verdicts = [
      [
        flat.every((f) => f.flat),
        `memory flat (each process's last minute within 20 % of its second): ${flat.map((f) => `${f.process} ${f.from_mb} -> ${f.to_mb} MB`).join(', ')}`,
      ],
      [errors === 0, `errors stay 0: ${errors}`],
      [
        Number(worst['p99_ms']) <= 1.5 * firstP99,
        `p99 within 1.5 x the first minute's (${firstP99} ms) every minute: worst ${worst['p99_ms']} ms at minute ${worst['minute']}, last ${last['p99_ms']} ms`,
      ],
    ] as const;
    for (const [ok, line] of verdicts) console.log(`${ok ? 'PASS' : 'FAIL'} ${line}`);
    if (verdicts.some(([ok]) => !ok)) process.exitCode = 1;
  } finally {
    stopped = true;
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
