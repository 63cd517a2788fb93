// A counting proxy in front of the emulators, shared by the cost benchmarks (aws-ops.ts, agent-cost.ts,
// idle-stream.ts, idle-viewer.ts, viewer-reads.ts; withCountedStack runs a stack of its own behind it): the stack's
// single AWS endpoint (AWS_ENDPOINT_URL, as for LocalStack). It forwards DynamoDB calls
// (`X-Amz-Target: DynamoDB_20120810.*`) to DynamoDB Local and SQS calls (`AmazonSQS.*`) to the SQS emulator, and
// counts each call by operation, with the items a transaction writes and the bytes each read answers (read units
// are estimated from those bytes: 4 KB per unit, strongly consistent; a transaction item counts twice).
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { startDynamo, startSqs, type Emulator } from '../../local/emulators.js';
import { freePort } from '../../local/ports.js';
import { startStack, type Stack } from '../../local/stack.js';
import { signedIn } from './support.js';

export interface Tally {
  calls: number;
  /** Write request units (estimated: 1 per item written, 2 per transaction item). */
  wru: number;
  /** Read request units (estimated from the answer's size: 4 KB a unit). */
  rru: number;
  /** Items read (the answers' Count, Item, Responses). */
  items: number;
}

/** How many items a DynamoDB read answered. */
const itemsIn = (operation: string, answer: string): number => {
  if (!['GetItem', 'Query', 'Scan', 'BatchGetItem'].includes(operation)) return 0;
  try {
    const parsed = JSON.parse(answer) as { Count?: number; Item?: unknown; Responses?: Record<string, unknown[]> };
    if (operation === 'GetItem') return parsed.Item === undefined ? 0 : 1;
    if (operation === 'BatchGetItem') return Object.values(parsed.Responses ?? {}).reduce((n, r) => n + r.length, 0);
    return parsed.Count ?? 0;
  } catch {
    return 0;
  }
};

/**
 * The name under which an empty SQS receive is counted: the local pollers short-poll, and ask an empty queue again
 * at its next send or a second later (local/queue-activity.ts; Lambda's pollers long-poll instead), so these calls
 * come with time and with other work, not with the work counted.
 */
export const EMPTY_RECEIVE = 'sqs ReceiveMessage (empty)';

/** The part of a partition key before its first `#` (`TARGET`, `COMMAND`, ...): which kind of record a call is about. */
const kindOf = (key: { pk?: { S?: string } } | undefined): string => key?.pk?.S?.split('#')[0] ?? '?';

/**
 * What a DynamoDB call touches, as `<operation> <record kind>`: single-item calls by their key, a transaction's items
 * each by theirs (`TransactWriteItems/Update COMMAND`), a query by its index or partition.
 */
export const keyKindsOf = (operation: string, body: string): string[] => {
  const parsed = JSON.parse(body || '{}') as {
    Key?: { pk?: { S?: string } };
    Item?: { pk?: { S?: string } };
    IndexName?: string;
    ExpressionAttributeValues?: Record<string, { S?: string }>;
    TransactItems?: Record<string, { Key?: { pk?: { S?: string } }; Item?: { pk?: { S?: string } } }>[];
  };
  if (operation === 'TransactWriteItems')
    return (parsed.TransactItems ?? []).flatMap((item) =>
      Object.entries(item).map(([op, write]) => `${operation}/${op} ${kindOf(write.Key ?? write.Item)}`),
    );
  if (operation === 'Query') {
    const partition = Object.values(parsed.ExpressionAttributeValues ?? {})[0]?.S?.split('#')[0] ?? '?';
    return [`Query ${parsed.IndexName ?? 'table'} ${partition}`];
  }
  if (['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'].includes(operation))
    return [`${operation} ${kindOf(parsed.Key ?? parsed.Item)}`];
  return [];
};

/** Counts by service and operation (e.g. `dynamodb GetItem`, `sqs ReceiveMessage`), and DynamoDB's by record kind. */
export class Counter {
  readonly byOperation = new Map<string, Tally>();
  readonly byKeyKind = new Map<string, Tally>();

  record(service: string, operation: string, body: string, answerBytes: number, answer = ''): void {
    const empty = service === 'sqs' && operation === 'ReceiveMessage' && !answer.includes('"Messages":[{');
    const key = empty ? EMPTY_RECEIVE : `${service} ${operation}`;
    const tally = this.byOperation.get(key) ?? { calls: 0, wru: 0, rru: 0, items: 0 };
    tally.calls += 1;
    if (service === 'dynamodb') tally.items += itemsIn(operation, answer);
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
      for (const kind of keyKindsOf(operation, body)) {
        const byKind = this.byKeyKind.get(kind) ?? { calls: 0, wru: 0, rru: 0, items: 0 };
        byKind.calls += 1;
        this.byKeyKind.set(kind, byKind);
      }
    }
    this.byOperation.set(key, tally);
  }

  snapshot(): Map<string, Tally> {
    return new Map([...this.byOperation].map(([k, v]) => [k, { ...v }]));
  }

  /** The calls by record kind so far (keyKindsOf), for `difference`. */
  snapshotKinds(): Map<string, Tally> {
    return new Map([...this.byKeyKind].map(([k, v]) => [k, { ...v }]));
  }
}

export const difference = (after: Map<string, Tally>, before: Map<string, Tally>): Map<string, Tally> => {
  const out = new Map<string, Tally>();
  for (const [key, tally] of after) {
    const was = before.get(key) ?? { calls: 0, wru: 0, rru: 0, items: 0 };
    if (tally.calls > was.calls)
      out.set(key, {
        calls: tally.calls - was.calls,
        wru: tally.wru - was.wru,
        rru: tally.rru - was.rru,
        items: tally.items - was.items,
      });
  }
  return out;
};

export const startCountingProxy = async (dynamo: Emulator, sqs: Emulator, counter: Counter) => {
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
              toDynamo || operation === 'ReceiveMessage' ? raw.toString('utf8') : '',
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

/** What a cost benchmark's body gets: the stack, its agents, the counter of its AWS calls, the admin's calls. */
export interface CountedStack {
  readonly stack: Stack;
  readonly agents: readonly LocalAgent[];
  readonly counter: Counter;
  /** The counting proxy's endpoint (AWS_ENDPOINT_URL), for a child process that should be counted too. */
  readonly proxyEndpoint: string;
  readonly baseUrl: string;
  readonly call: Awaited<ReturnType<typeof signedIn>>['call'];
}

/**
 * Runs `body` against a local stack of its own whose handlers' AWS calls go through a counting proxy (emulators of
 * its own, AWS_ENDPOINT_URL set), with the admin signed in and local-1 and local-2 running; stops it all after.
 */
export const withCountedStack = async (
  options: {
    readonly name: string;
    readonly admin: { email: string; password: string };
    readonly env?: Record<string, string>;
  },
  body: (run: CountedStack) => Promise<void>,
): Promise<void> => {
  const dir = await mkdtemp(join(tmpdir(), `deployer-bench-${options.name}-`));
  const counter = new Counter();
  const dynamo = await startDynamo({ port: await freePort() });
  const sqs = await startSqs({ port: await freePort() });
  const proxy = await startCountingProxy(dynamo, sqs, counter);
  process.env['AWS_ENDPOINT_URL'] = proxy.endpoint;
  let stack: Stack | undefined;
  let agents: readonly LocalAgent[] = [];
  try {
    stack = await startStack({
      port: 0,
      namePrefix: `bench-${options.name}-${randomUUID().slice(0, 8)}-`,
      bootstrapAdmin: options.admin,
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    const { baseUrl, call } = await signedIn(stack, options.admin);
    agents = await startLocalAgents({ ...stack, dynamoEndpoint: dynamo.endpoint }, dir, () => undefined);
    await body({ stack, agents, counter, proxyEndpoint: proxy.endpoint, baseUrl, call });
  } finally {
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
    await stack?.stop();
    await proxy.stop();
    await sqs.stop();
    await dynamo.stop();
    await rm(dir, { recursive: true, force: true });
  }
};
