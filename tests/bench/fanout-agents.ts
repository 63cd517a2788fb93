// The agents of `npm run bench:fanout`, hosted in child processes so that their own CPU does not decide the figure:
// the benchmark forks k of these (fanout.ts, AGENT_PROCESSES), each runs N/k real agents (agent/agent.ts) and
// answers the parent over the IPC channel. The parent measures each child's CPU from /proc apart from the stack's.
//
// Parent -> child: { type: 'reset' } (a round starts), { type: 'collect' } (send what the round saw), { type: 'stop' }.
// Child -> parent: { type: 'enrolled', count }, { type: 'ready' }, { type: 'reset' }, { type: 'collected', ... }.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startAgent, type RunningAgent } from '../../agent/agent.js';

/** What one child is asked to run. */
export interface AgentHostConfig {
  server: string;
  enrollToken: string;
  dir: string;
  /** Index of the first agent (names are bench-0001...). */
  first: number;
  count: number;
  firstBatchMs?: number;
}

/** What a child saw during a round. */
export interface RoundTraffic {
  /** Request durations by kind (path without the command id). */
  durations: [string, number[]][];
  /** The agents' own started -> finished times (their log lines). */
  finishedIn: number[];
  /** Requests by kind and status, since the start. */
  traffic: [string, number][];
  refusals: string[];
  problems: string[];
}

type ToChild = { type: 'reset' | 'collect' | 'stop' };
type FromChild =
  | { type: 'enrolled'; count: number }
  | { type: 'ready'; problems: string[] }
  | { type: 'reset' }
  | ({ type: 'collected' } & RoundTraffic);

/** Agents enrolling at once in one child (each enrollment is a request plus a state file). */
const ENROLL_BATCH = 10;
const CHILD_FLAG = 'FANOUT_AGENT_HOST';

/** What the commands of the agents start from: the basics of a login shell, not this process's environment. */
const commandEnvironment = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    ['PATH', 'HOME', 'USER', 'LANG', 'TMPDIR'].flatMap((k) =>
      process.env[k] === undefined ? [] : [[k, process.env[k]]],
    ),
  );

const runChild = async (config: AgentHostConfig) => {
  const send = (message: FromChild) => process.send?.(message);
  const traffic = new Map<string, number>();
  const durations = new Map<string, number[]>();
  const refusals: string[] = [];
  const problems: string[] = [];
  let finishedIn: number[] = [];
  const countingFetch: typeof fetch = async (input, init) => {
    const sent = Date.now();
    const response = await fetch(input, init);
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const kind = url.pathname.replace(/^\/api\/v1\/agent\//, '').replace(/commands\/[^/]+\//, 'commands/{id}/');
    durations.set(kind, [...(durations.get(kind) ?? []), Date.now() - sent]);
    traffic.set(`${kind} ${response.status}`, (traffic.get(`${kind} ${response.status}`) ?? 0) + 1);
    if (response.status >= 400 && refusals.length < 5)
      refusals.push(
        `${new Date().toISOString()} ${init?.method ?? 'GET'} ${kind} ${response.status} retry-after ${response.headers.get('retry-after')}`,
      );
    return response;
  };
  const agents: RunningAgent[] = [];
  for (let offset = 0; offset < config.count; offset += ENROLL_BATCH) {
    const batch = Array.from(
      { length: Math.min(ENROLL_BATCH, config.count - offset) },
      (_, i) => config.first + offset + i,
    );
    const started = await Promise.allSettled(
      batch.map((i) => {
        const name = `bench-${String(i + 1).padStart(4, '0')}`;
        return startAgent({
          server: config.server,
          name,
          tags: [{ key: 'bench', value: 'fanout' }],
          enrollToken: config.enrollToken,
          stateDir: join(config.dir, name),
          pollWaitSeconds: 20,
          ...(config.firstBatchMs === undefined ? {} : { firstBatchMs: config.firstBatchMs }),
          fetch: countingFetch,
          env: commandEnvironment(),
          log: (line) => {
            const took = /finished \S+: exit \d+ in ([\d.]+)s/.exec(line)?.[1];
            if (took !== undefined) finishedIn.push(Number(took) * 1000);
            if (/error|fail|refused|unavailable|retry/i.test(line)) problems.push(`${name}: ${line}`);
          },
        });
      }),
    );
    for (const result of started) {
      if (result.status === 'fulfilled') agents.push(result.value);
      else problems.push(`enrollment failed: ${String(result.reason)}`);
    }
    send({ type: 'enrolled', count: agents.length });
  }
  send({ type: 'ready', problems: problems.splice(0) });
  // The parent gone (Ctrl-C, crash): stop the agents rather than leave them polling.
  process.once(
    'disconnect',
    () => void Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 }))).finally(() => process.exit(0)),
  );
  process.on('message', (message: ToChild) => {
    if (message.type === 'reset') {
      durations.clear();
      finishedIn = [];
      send({ type: 'reset' });
    } else if (message.type === 'collect') {
      send({
        type: 'collected',
        durations: [...durations],
        finishedIn: finishedIn.splice(0),
        traffic: [...traffic],
        refusals: refusals.splice(0),
        problems: problems.splice(0),
      });
    } else if (message.type === 'stop') {
      void Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 }))).finally(() => process.exit(0));
    }
  });
};

/** One child process hosting agents, as the parent sees it. */
export interface AgentHost {
  pid: number;
  /** Resolves once every agent of the child has tried to enroll; `enrolled` is how many did. */
  ready: Promise<{ enrolled: number; problems: string[] }>;
  /** Clears the round's durations; resolves once the child has. */
  reset(): Promise<void>;
  collect(): Promise<RoundTraffic>;
  stop(): Promise<void>;
}

/** Forks a child running `config.count` agents (same tsx loader as this process). */
export const startAgentHost = (config: AgentHostConfig, onEnrolled: (count: number) => void): AgentHost => {
  const child: ChildProcess = fork(import.meta.filename, [], {
    env: { ...process.env, [CHILD_FLAG]: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let enrolled = 0;
  const waiting = new Map<string, (message: FromChild) => void>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<{ enrolled: number; problems: string[] }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`agent host ${child.pid} exited (${code}) before it was ready`)));
    child.on('message', (message: FromChild) => {
      if (message.type === 'enrolled') onEnrolled((enrolled = message.count));
      else if (message.type === 'ready') resolve({ enrolled, problems: message.problems });
      else waiting.get(message.type)?.(message);
    });
  });
  ready.catch(() => undefined);
  const ask = <T extends FromChild>(type: ToChild['type'], answer: T['type']) =>
    new Promise<T>((resolve) => {
      waiting.set(answer, (message) => resolve(message as T));
      child.send({ type });
    });
  return {
    pid: child.pid ?? -1,
    ready,
    reset: async () => void (await ask('reset', 'reset')),
    collect: async () => {
      const { type: _, ...traffic } = await ask<{ type: 'collected' } & RoundTraffic>('collect', 'collected');
      return traffic;
    },
    stop: async () => {
      if (child.exitCode === null && child.connected) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
};

const childConfig = process.env[CHILD_FLAG];
if (childConfig !== undefined) {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  await runChild(JSON.parse(childConfig) as AgentHostConfig);
}
