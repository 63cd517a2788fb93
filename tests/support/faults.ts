// Fault injection (issue 34): an HTTP proxy in front of DynamoDB Local or the SQS emulator that the stack's handlers
// talk to (startStack's `awsEndpoints`), failing a chosen share of calls by kind and by operation, and counting
// what it did. The kinds:
//   throttle  answered at once: DynamoDB 400 ProvisionedThroughputExceededException, SQS 400 RequestThrottled;
//             nothing reached the emulator.
//   internal  answered at once: 500 InternalServerError (DynamoDB) / InternalError (SQS); nothing applied.
//   timeout   forwarded, the emulator's answer received (the write applied) and then lost: the connection is held
//             for `holdMs` and dropped, as a response that never arrives (the client retries or gives up).
//   reset     the connection dropped before forwarding (nothing applied).
// The operation is the `X-Amz-Target` header's last part (PutItem, TransactWriteItems, SendMessage, ...) or the
// query protocol's `Action`. `operations` limits the faults to those; everything else is forwarded untouched.
import { request, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import type { Stack, StackOptions } from '../../local/stack.js';
import { startStack } from '../../local/stack.js';
import { uniqueName } from './aws.js';
import { apiClient } from './http.js';

export type FaultKind = 'throttle' | 'internal' | 'timeout' | 'reset';
export const FAULT_KINDS: readonly FaultKind[] = ['throttle', 'internal', 'timeout', 'reset'];

export interface FaultPlan {
  /** Share of the matching calls that fail, 0 to 1. */
  readonly rate: number;
  /** The kinds drawn from, each as likely (default: all four). */
  readonly kinds?: readonly FaultKind[];
  /** Only these operations fail (default: every one). */
  readonly operations?: readonly string[];
  /** How long a `timeout` holds the connection before dropping it (default 1500 ms; the SDK's own is 10 s). */
  readonly holdMs?: number;
}

export interface FaultCounts {
  /** Calls seen, and forwarded to the emulator (a timeout is forwarded too). */
  calls: number;
  forwarded: number;
  /** Faults by kind; `applied` the timeouts whose write the emulator accepted (2xx) before the answer was lost. */
  faults: Record<FaultKind, number>;
  applied: number;
  /** Calls and faults by operation. */
  byOperation: Record<string, { calls: number; faults: number }>;
}

export interface FaultProxy {
  readonly url: string;
  readonly service: 'dynamodb' | 'sqs';
  /** Sets the faults from now on (rate 0: a plain proxy). */
  set(plan: FaultPlan): void;
  readonly counts: () => FaultCounts;
  /** The calls so far, total faults. */
  readonly faulted: () => number;
  close(): Promise<void>;
}

const emptyCounts = (): FaultCounts => ({
  calls: 0,
  forwarded: 0,
  faults: { throttle: 0, internal: 0, timeout: 0, reset: 0 },
  applied: 0,
  byOperation: {},
});

const operationOf = (req: IncomingMessage, body: Buffer): string => {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return target.split('.').at(-1) ?? target;
  const query = new URL(req.url ?? '/', 'http://x').searchParams.get('Action');
  if (query !== null) return query;
  const form = new URLSearchParams(body.toString('utf8')).get('Action');
  return form ?? 'unknown';
};

/** The error answer a service gives for a throttle or an internal error, in its JSON protocol. */
const errorAnswer = (service: 'dynamodb' | 'sqs', kind: 'throttle' | 'internal') => {
  const code =
    service === 'dynamodb'
      ? kind === 'throttle'
        ? 'ProvisionedThroughputExceededException'
        : 'InternalServerError'
      : kind === 'throttle'
        ? 'RequestThrottled'
        : 'InternalError';
  const type = service === 'dynamodb' ? `com.amazonaws.dynamodb.v20120810#${code}` : `com.amazonaws.sqs#${code}`;
  return {
    status: kind === 'throttle' ? 400 : 500,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-requestid': `fault-${Math.random().toString(36).slice(2)}`,
      ...(service === 'sqs' ? { 'x-amzn-query-error': `${code};${kind === 'throttle' ? 'Sender' : 'Receiver'}` } : {}),
    },
    body: JSON.stringify({ __type: type, message: `injected fault: ${code}` }),
  };
};

export const startFaultProxy = async (upstream: string, service: 'dynamodb' | 'sqs'): Promise<FaultProxy> => {
  const target = new URL(upstream);
  let plan: FaultPlan = { rate: 0 };
  let counts = emptyCounts();
  const held = new Set<ServerResponse>();

  const forward = (
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const out = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'content-length': String(body.length) },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (c: Buffer) => chunks.push(c));
          answer.on('end', () =>
            resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }),
          );
          answer.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const operation = operationOf(req, body);
        counts.calls += 1;
        const op = (counts.byOperation[operation] ??= { calls: 0, faults: 0 });
        op.calls += 1;
        const kinds = plan.kinds ?? FAULT_KINDS;
        const matches = plan.operations === undefined || plan.operations.includes(operation);
        const kind =
          matches && kinds.length > 0 && Math.random() < plan.rate
            ? kinds[Math.floor(Math.random() * kinds.length)]
            : undefined;
        if (kind !== undefined) {
          counts.faults[kind] += 1;
          op.faults += 1;
        }
        if (kind === 'reset') return void req.socket.destroy();
        if (kind === 'throttle' || kind === 'internal') {
          const answer = errorAnswer(service, kind);
          res.writeHead(answer.status, answer.headers).end(answer.body);
          return;
        }
        try {
          counts.forwarded += 1;
          const answer = await forward(req, body);
          if (kind === 'timeout') {
            if (answer.status < 300) counts.applied += 1;
            held.add(res);
            setTimeout(() => {
              held.delete(res);
              req.socket.destroy();
            }, plan.holdMs ?? 1_500).unref();
            return;
          }
          const headers = { ...answer.headers };
          delete headers['transfer-encoding'];
          delete headers['connection'];
          res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) }).end(answer.body);
        } catch {
          req.socket.destroy();
        }
      })();
    });
    req.on('error', () => undefined);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    service,
    set: (next) => {
      plan = next;
    },
    counts: () => structuredClone(counts),
    faulted: () => Object.values(counts.faults).reduce((n, f) => n + f, 0),
    close: async () => {
      for (const res of held) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      counts = emptyCounts();
    },
  };
};

/** Both proxies, set together. */
export interface Faults {
  readonly dynamodb: FaultProxy;
  readonly sqs: FaultProxy;
  set(plan: FaultPlan): void;
  /** The faults injected so far, by service and kind. */
  summary(): { dynamodb: FaultCounts; sqs: FaultCounts; total: number };
  close(): Promise<void>;
}

/**
 * A stack whose handlers reach DynamoDB and SQS through fault proxies (no faults until `faults.set`). The stack's
 * own set-up, its pollers and the tests' direct reads go to the emulators.
 */
export const startStackWithFaults = async (options: StackOptions): Promise<{ stack: Stack; faults: Faults }> => {
  let proxies: { dynamodb: FaultProxy; sqs: FaultProxy } | undefined;
  const stack = await startStack({
    ...options,
    awsEndpoints: async (emulators) => {
      proxies = {
        dynamodb: await startFaultProxy(emulators.dynamodb, 'dynamodb'),
        sqs: await startFaultProxy(emulators.sqs, 'sqs'),
      };
      return { dynamodb: proxies.dynamodb.url, sqs: proxies.sqs.url };
    },
  });
  const { dynamodb, sqs } = proxies!;
  return {
    stack,
    faults: {
      dynamodb,
      sqs,
      set: (plan) => {
        dynamodb.set(plan);
        sqs.set(plan);
      },
      summary: () => ({
        dynamodb: dynamodb.counts(),
        sqs: sqs.counts(),
        total: dynamodb.faulted() + sqs.faulted(),
      }),
      close: async () => {
        await dynamodb.close();
        await sqs.close();
      },
    },
  };
};

/** A stack with fault proxies, its admin signed in and the two local agents running (the fault e2e files' set-up). */
export interface FaultyStackWithAgents {
  readonly stack: Stack;
  readonly faults: Faults;
  /** The agents' scratch folder (their state and whatever their commands write); removed by `stop`. */
  readonly dir: string;
  readonly agents: readonly LocalAgent[];
  /** The admin's access token. */
  readonly token: string;
  /** Faults off, the agents, the stack and the proxies stopped, the folder removed. */
  stop(): Promise<void>;
}

export const startFaultyStackWithAgents = async (
  name: string,
  admin: { readonly email: string; readonly password: string },
  env: Readonly<Record<string, string>> = {},
): Promise<FaultyStackWithAgents> => {
  const { stack, faults } = await startStackWithFaults({
    port: 0,
    namePrefix: `${uniqueName(name)}-`,
    bootstrapAdmin: admin,
    env,
  });
  const token = (await apiClient(() => stack.baseUrl).login(admin)).token;
  const dir = await mkdtemp(join(tmpdir(), `deployer-${name}-`));
  const agents = await startLocalAgents(stack, dir, () => undefined);
  return {
    stack,
    faults,
    dir,
    agents,
    token,
    stop: async () => {
      faults.set({ rate: 0 });
      await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
      await stack.stop();
      await faults.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};
