// Benchmark (figures printed, nothing asserted): deployments under injected AWS faults (issue 34). Run with
// `npm run bench:chaos [-- creates]` (default 20 creates per rate).
//
// One local stack with its two local agents, 4 orchestration instances; the handlers reach DynamoDB and SQS through
// tests/support/faults.ts. For each rate (10 %, 30 %, 50 % of the calls failing: throttling, 500, timeout after the
// write applied, connection reset, each as likely): creates two a second on local-1, each with an Idempotency-Key and
// retried on a 5xx or 409 (6 times at most, as a pipeline would); the faults stop; every accepted deployment is
// awaited (2 minutes at most). Printed per rate: the first answers and the final answers by status, the retries,
// deployments run, run twice, stuck (accepted and not ended, or requests still waiting), and refused_but_ran: runs
// that no final answer named (a create that committed, answered 5xx and was run again by its retry), the faults
// injected, and the time.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalAgents } from '../../local/agents.js';
import { startStackWithFaults } from '../support/faults.js';
import { apiClient } from '../support/http.js';
import { runBench } from './support.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const ADMIN = { email: 'bench@example.com', password: 'bench-password' };
/** CHAOS_RATES=0.5 (comma-separated) runs those rates only. */
const RATES = (process.env['CHAOS_RATES'] ?? '0.1,0.3,0.5').split(',').map(Number);
const TERMINAL = ['success', 'failed', 'cancelled', 'rolled_back'];
const CREATES = Number(process.argv[2] ?? 20);
/** Retries of a create refused with a 5xx or 409, as the command line does. */
const RETRIES = 6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

void runBench(async () => {
  const { logger } = await import('../../functions/shared/logger.js');
  logger.setLogLevel('CRITICAL');
  const { stack, faults } = await startStackWithFaults({
    port: 0,
    bootstrapAdmin: ADMIN,
    env: { SWEEP_INTERVAL_MS: '5000' },
  });
  const dir = await mkdtemp(join(tmpdir(), 'deployer-chaos-'));
  const agents = await startLocalAgents(stack, dir, () => undefined);
  const api = apiClient(() => stack.baseUrl);
  const token = (await api.login(ADMIN)).token;
  const call = (method: string, path: string, body?: unknown) => api.call(method, `/api/v1${path}`, { token, body });
  try {
    await call('PUT', '/admin/orchestration', { instances: 4 });
    const runFile = join(dir, 'runs');
    const action = await call('POST', '/actions', {
      slug: 'chaos-run',
      name: 'chaos-run',
      version: { version: '1.0.0', script: `echo "$DEPLOYER_DEPLOYMENT_ID" >> ${runFile}` },
    });
    for (let i = 0; i < 60; i += 1) {
      const targets = (await call('GET', '/targets?limit=100')).json.data as { name: string }[];
      if (targets.some((t) => t.name === 'local-1')) break;
      await sleep(500);
    }
    const rows: Record<string, unknown>[] = [];
    for (const rate of RATES) {
      const since = Date.now();
      const before = (await readFile(runFile, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
      const faultsBefore = faults.summary().total;
      faults.set({ rate });
      // Each create as a careful client sends it: one Idempotency-Key, retried on a 5xx or 409 with backoff.
      const tries = await Promise.all(
        Array.from({ length: CREATES }, async (_, i) => {
          await sleep(i * 500);
          const key = `chaos-${rate}-${i}-${since}`;
          const sent = [];
          for (let attempt = 1; attempt <= RETRIES + 1; attempt += 1) {
            const answer = await api.call('POST', '/api/v1/deployments', {
              token,
              headers: { 'idempotency-key': key },
              body: { action_id: action.json.id, target_tags: [{ key: 'role', value: 'web' }] },
            });
            sent.push(answer);
            if (answer.status < 500 && answer.status !== 409) break;
            await sleep(200 * attempt);
          }
          return sent;
        }),
      );
      const answers = tries.map((t) => t.at(-1)!);
      const firstByStatus: Record<string, number> = {};
      for (const t of tries) firstByStatus[t[0]!.status] = (firstByStatus[t[0]!.status] ?? 0) + 1;
      faults.set({ rate: 0 });
      const injected = faults.summary().total - faultsBefore;
      const byStatus: Record<string, number> = {};
      for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
      // The accepted ones: a 201's id, a 202's deployment once dispatched
      const deadline = Date.now() + 120_000;
      const ids = new Map<number, string>();
      const ended = new Set<string>();
      while (Date.now() < deadline) {
        const pending = (await call('GET', '/deployments/pending?limit=100')).json as
          { id: string; deployment_id?: string }[] | { data: { id: string; deployment_id?: string }[] };
        const list = Array.isArray(pending) ? pending : pending.data;
        answers.forEach((a, i) => {
          if (a.status === 201) ids.set(i, a.json.deployment_id as string);
          if (a.status === 202) {
            const found = list.find((p) => p.id === a.json.pending_request_id)?.deployment_id;
            if (found !== undefined) ids.set(i, found);
          }
        });
        for (const id of ids.values())
          if (!ended.has(id) && TERMINAL.includes((await call('GET', `/deployments/${id}`)).json.state as string))
            ended.add(id);
        const accepted = answers.filter((a) => a.status === 201 || a.status === 202).length;
        if (ids.size === accepted && ended.size === accepted) break;
        await sleep(1_000);
      }
      await sleep(6_000); // a sweep
      const lines = (await readFile(runFile, 'utf8').catch(() => '')).split('\n').filter(Boolean).slice(before);
      const counts = new Map<string, number>();
      for (const l of lines) counts.set(l, (counts.get(l) ?? 0) + 1);
      const acceptedIds = new Set(ids.values());
      const pendingLeft = ((await call('GET', '/deployments/pending?limit=100')).json as { status: string }[]).filter(
        (p) => p.status === 'pending' || p.status === 'processing',
      ).length;
      rows.push({
        rate: `${rate * 100} %`,
        first_answers: firstByStatus,
        retries: tries.flat().length - tries.length,
        final_answers: byStatus,
        faults: injected,
        ran: counts.size,
        ran_twice: [...counts.values()].filter((n) => n > 1).length,
        stuck: answers.filter((a) => a.status === 201 || a.status === 202).length - ended.size + pendingLeft,
        refused_but_ran: [...counts.keys()].filter((id) => !acceptedIds.has(id)).length,
        seconds: Math.round((Date.now() - since) / 1000),
      });
      console.log(`RESULT ${JSON.stringify({ bench: 'chaos', ...rows.at(-1) })}`);
      // What the refused keys were answered, attempt by attempt, and when the runs no answer named were created.
      for (const t of tries.filter((t) => t.at(-1)!.status >= 300))
        console.log('refused key:', t.map((a) => `${a.status} ${String(a.json?.error?.code ?? '')}`).join(', '));
      for (const id of [...counts.keys()].filter((id) => !acceptedIds.has(id))) {
        const d = (await call('GET', `/deployments/${id}`)).json;
        console.log('ran, no answer named it:', id, d.created_at, d.state);
      }
    }
    const ready = await call('GET', '/health/ready');
    console.table(
      rows.map((r) => ({
        ...r,
        first_answers: JSON.stringify(r['first_answers']),
        final_answers: JSON.stringify(r['final_answers']),
      })),
    );
    console.log(`health/ready after: ${ready.status}`);
    const s = faults.summary();
    console.log('faults by kind', {
      dynamodb: s.dynamodb.faults,
      sqs: s.sqs.faults,
      applied_then_lost: s.dynamodb.applied + s.sqs.applied,
    });
  } finally {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack.stop();
    await faults.close();
    await rm(dir, { recursive: true, force: true });
  }
});
