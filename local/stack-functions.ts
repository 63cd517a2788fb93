// The local stack's functions (local/stack.ts): the HTTP functions in serverless-offline, started again on new
// ports when one was taken meanwhile, and the ones this process runs itself (a poller per SQS consumer, the
// schedules, the stream function), imported from the modules serverless.yml names.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LocalQueue } from './bootstrap.js';
import { installLambdaStreamingShim } from './lambda-streaming.js';
import { startOffline, type Offline } from './offline.js';
import { startPoller, type Poller, type SqsHandler } from './poller.js';
import { freePort } from './ports.js';
import { startSchedule, type ScheduledHandler } from './scheduler.js';
import { startStreamPoller, type StreamHandler } from './stream-poller.js';
import { ROOT, type ServiceDefinition } from './service-definition.js';
import { startStreamRunner, type LocalStreamHandler } from './stream-runner.js';

/** What a start's steps share: the log, the stops so far (run in reverse), the step timer. */
export interface StartSteps {
  readonly log: (line: string) => void;
  readonly stops: (() => Promise<void>)[];
  /** A step done: its own time (since the previous step, or since `since` for steps that ran side by side). */
  readonly done: (step: string, since?: number) => void;
}

const importExport = async <T>(module: string, exportName: string): Promise<T> => {
  const loaded = (await import(pathToFileURL(join(ROOT, `${module}.ts`)).href)) as Record<string, unknown>;
  const value = loaded[exportName];
  if (typeof value !== 'function') throw new Error(`${module}.ts does not export a function named ${exportName}`);
  return value as T;
};

/**
 * serverless-offline (esbuild + the framework, the longest step). A port freePort found free can be taken
 * before serverless-offline listens on it (any outgoing connection on the machine may get it as its local port):
 * start again on new ports, a few times. Answers the WebSocket port it listens on (it may have changed).
 */
export const startFunctions = async (
  { log, stops, done }: StartSteps,
  env: Record<string, string>,
  ports: { readonly websocketPort: number; readonly fixed: number | undefined; readonly verbose: boolean },
): Promise<{ readonly offline: Offline; readonly websocketPort: number }> => {
  const since = Date.now();
  let websocketPort = ports.websocketPort;
  const start = async (attempt: number): Promise<Offline> => {
    try {
      return await startOffline({
        httpPort: await freePort(),
        lambdaPort: await freePort(),
        websocketPort,
        env,
        log,
        verbose: ports.verbose,
      });
    } catch (error) {
      if (attempt >= 3 || !String((error as Error).message).includes('EADDRINUSE')) throw error;
      log(`serverless-offline could not listen (a port was taken meanwhile); starting again (${attempt + 1})`);
      if (!ports.fixed) {
        // Its WebSocket port may be the one taken: a new one, named to the handlers before any of them runs.
        websocketPort = await freePort();
        env['AGENT_SOCKET_ENDPOINT'] = `http://127.0.0.1:${websocketPort}`;
        process.env['AGENT_SOCKET_ENDPOINT'] = env['AGENT_SOCKET_ENDPOINT'];
      }
      return start(attempt + 1);
    }
  };
  const offline = await start(1);
  stops.push(() => offline.stop());
  done('HTTP functions (serverless-offline)', since);
  return { offline, websocketPort };
};

/** The functions this process runs: a poller per SQS consumer, the schedules, the stream function. */
export const startInProcessFunctions = async (
  { log, stops }: StartSteps,
  definition: ServiceDefinition,
  queues: Readonly<Record<string, LocalQueue>>,
  sqsClient: SQSClient,
  options: {
    readonly env?: Readonly<Record<string, string>> | undefined;
    readonly streamHandler?: LocalStreamHandler | undefined;
  },
  tables: {
    readonly client: DynamoDBClient;
    readonly endpoint: string;
    readonly names: Readonly<Record<string, string>>;
  },
): Promise<{ readonly url: string }> => {
  // A table stream's consumers (the viewers' resource lists) read DynamoDB Local's stream from now on (none when the
  // stack runs without table streams: StackOptions.tableStreams).
  for (const consumer of definition.streamConsumers) {
    const handler = await importExport<StreamHandler>(consumer.module, consumer.exportName);
    const tableName = tables.names[consumer.tableLogicalId];
    if (tableName === undefined)
      throw new Error(`stream consumer ${consumer.functionName}: table ${consumer.tableLogicalId} is not defined`);
    const poller = await startStreamPoller({
      dynamo: tables.client,
      endpoint: tables.endpoint,
      tableName,
      functionName: consumer.functionName,
      handler,
      batchSize: consumer.batchSize,
      log,
    });
    stops.push(() => poller.stop());
  }
  const pollers: Poller[] = [];
  for (const consumer of definition.consumers) {
    const queue = queues[consumer.queueLogicalId];
    if (queue === undefined)
      throw new Error(`consumer ${consumer.functionName}: queue ${consumer.queueLogicalId} is not defined`);
    const handler = await importExport<SqsHandler>(consumer.module, consumer.exportName);
    pollers.push(startPoller({ ...consumer, sqs: sqsClient, queueUrl: queue.url, queueArn: queue.arn, handler, log }));
  }
  stops.push(async () => void (await Promise.all(pollers.map((p) => p.stop()))));
  // Scheduled functions (the sweep) run on a timer: every SWEEP_INTERVAL_MS (default 60000, the cloud's rate).
  const intervalMs = Number(options.env?.['SWEEP_INTERVAL_MS'] ?? process.env['SWEEP_INTERVAL_MS'] ?? 60_000);
  for (const schedule of definition.schedules) {
    const handler = await importExport<ScheduledHandler>(schedule.module, schedule.exportName);
    const running = startSchedule({ functionName: schedule.functionName, handler, intervalMs, log });
    stops.push(() => running.stop());
  }
  installLambdaStreamingShim();
  const streamHandler =
    options.streamHandler ??
    (definition.streamFunction === undefined
      ? undefined
      : await importExport<LocalStreamHandler>(definition.streamFunction.module, definition.streamFunction.exportName));
  if (streamHandler === undefined) throw new Error('serverless.yml defines no RESPONSE_STREAM function');
  const streams = await startStreamRunner({ handler: streamHandler, log });
  stops.push(() => streams.stop());
  return streams;
};
