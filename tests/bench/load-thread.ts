// An HTTP load generator on a thread of its own, so that the requests it sends and times do not share an event loop
// with the stack's front (which runs in the benchmark's process, as under `npm start`). Each request is sent from
// a given loopback address (127.0.0.0/8 on Linux) with the caller's bearer token, and gets `timeoutMs` before it
// counts as a timeout (status 0).
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface Outcome {
  /** 0: no answer within the timeout (or the connection failed). */
  readonly status: number;
  readonly ms: number;
  /** When it was sent, in ms since the thread started (performance.now of the load thread). */
  readonly at: number;
  readonly retryAfter: string | undefined;
}

/** Requests to send: the i-th goes to paths[i % paths.length] from addresses[floor(i / paths.length) % addresses.length]. */
export interface Plan {
  readonly paths: readonly string[];
  readonly addresses: readonly string[];
}

type Job =
  | { readonly kind: 'open-loop'; readonly rate: number; readonly seconds: number; readonly plan: Plan }
  | { readonly kind: 'burst'; readonly count: number; readonly plan: Plan }
  | { readonly kind: 'one'; readonly plan: Plan }
  | { readonly kind: 'now' };

interface Settings {
  readonly port: number;
  readonly token: string;
  readonly timeoutMs: number;
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

const sender = ({ port, token, timeoutMs }: Settings) => {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const send = (path: string, localAddress: string): Promise<Outcome> =>
    new Promise((resolve) => {
      const at = performance.now();
      let settled = false;
      const settle = (status: number, retryAfter?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, ms: performance.now() - at, at, retryAfter });
      };
      const req = request(
        { host: '127.0.0.1', port, path, localAddress, agent, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => settle(res.statusCode ?? 0, res.headers['retry-after']));
          res.on('error', () => settle(0));
        },
      );
      const timer = setTimeout(() => {
        settle(0);
        req.destroy();
      }, timeoutMs);
      req.on('error', () => settle(0));
      req.end();
    });
  const nth = (plan: Plan, i: number) =>
    send(
      plan.paths[i % plan.paths.length]!,
      plan.addresses[Math.floor(i / plan.paths.length) % plan.addresses.length]!,
    );
  return async (job: Job): Promise<Outcome[] | number> => {
    if (job.kind === 'now') return performance.now();
    if (job.kind === 'one') return [await nth(job.plan, 0)];
    if (job.kind === 'burst') return Promise.all(Array.from({ length: job.count }, (_, i) => nth(job.plan, i)));
    // Open loop: every request at its own time, whatever the others are doing.
    const total = Math.round(job.rate * job.seconds);
    const pending: Promise<Outcome>[] = [];
    const started = performance.now();
    while (pending.length < total) {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * job.rate) + 1);
      while (pending.length < due) pending.push(nth(job.plan, pending.length));
      await sleep(2);
    }
    return Promise.all(pending);
  };
};

if (!isMainThread) {
  const run = sender(workerData as Settings);
  parentPort!.on('message', ({ id, job }: { id: number; job: Job }) => {
    void run(job).then((answer) => parentPort!.postMessage({ id, answer }));
  });
}

/** Starts the thread; each method resolves with the outcomes of what it sent. */
export const startLoadThread = (settings: Settings) => {
  const worker = new Worker(new URL(import.meta.url), { workerData: settings, execArgv: ['--import', 'tsx'] });
  const waiting = new Map<number, (answer: unknown) => void>();
  let next = 0;
  worker.on('message', ({ id, answer }: { id: number; answer: unknown }) => {
    waiting.get(id)?.(answer);
    waiting.delete(id);
  });
  const ask = <T>(job: Job) =>
    new Promise<T>((resolve) => {
      next += 1;
      waiting.set(next, resolve as (answer: unknown) => void);
      worker.postMessage({ id: next, job });
    });
  return {
    openLoop: (rate: number, seconds: number, plan: Plan) => ask<Outcome[]>({ kind: 'open-loop', rate, seconds, plan }),
    burst: (count: number, plan: Plan) => ask<Outcome[]>({ kind: 'burst', count, plan }),
    one: async (path: string, address: string) =>
      (await ask<Outcome[]>({ kind: 'one', plan: { paths: [path], addresses: [address] } }))[0]!,
    /** The load thread's clock (Outcome.at is on it). */
    now: () => ask<number>({ kind: 'now' }),
    stop: () => worker.terminate(),
  };
};
