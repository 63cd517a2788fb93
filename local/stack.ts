// The whole local stack, as `npm start` and the end-to-end tests run it:
// DynamoDB Local + SQS emulator -> tables and queues from serverless.yml -> serverless-offline (the HTTP
// functions, bundled by esbuild) + a poller per SQS consumer + the stream runner -> the front on one origin.
// Setting AWS_ENDPOINT_URL (LocalStack) replaces both emulators.
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { upgradeListIndex } from '../infra/dynamodb/deployment-list-index.js';
import type { AdmissionLimits } from './admission.js';
import { ensureQueues, ensureTables, type LocalQueue } from './bootstrap.js';
import { LOCAL_CREDENTIALS, startDynamo, startSqs, type Emulator } from './emulators.js';
import { buildConsole } from '../console/build.js';
import { buildPrograms, type ProgramName, type ProgramRelease, type StaticFile } from '../programs/build.js';
import { AGENT_SOCKET_PATH, startFront } from './front.js';
import { freePort, reservePort } from './ports.js';
import { keyFilePath, localKeyring } from './secrets.js';
import { loadServiceDefinition, type ServiceDefinition } from './service-definition.js';
import { parseCorsOrigins } from '../functions/shared/cors.js';
import { startFunctions, startInProcessFunctions, type StartSteps } from './stack-functions.js';
import type { LocalStreamHandler } from './stream-runner.js';

export interface StackOptions {
  /** Port of the single origin; 0 picks a free one. */
  readonly port: number;
  /** Where DynamoDB Local keeps its files; undefined keeps everything in memory. */
  readonly dataDir?: string | undefined;
  /** Prefix for local table and queue names (tests run several stacks side by side). */
  readonly namePrefix?: string;
  readonly dynamoPort?: number;
  /**
   * A DynamoDB Local already running, used instead of starting one: the stack creates its tables there (namePrefix
   * required, so stacks side by side never share one) and deletes them when it stops. Defaults to
   * DEPLOYER_DYNAMODB_ENDPOINT (the test run's emulator, tests/support/worker-env.ts) for a stack with a namePrefix
   * and neither dynamoPort nor dataDir (those ask for an emulator of its own).
   */
  readonly dynamoEndpoint?: string;
  readonly sqsPort?: number;
  /** serverless-offline's WebSocket port (the agents' socket and its @connections endpoint); 0 or absent: a free one. */
  readonly websocketPort?: number;
  readonly log?: (line: string) => void;
  /** Called as each start-up step finishes, with its time in ms (emulators, tables, functions, ...). */
  readonly progress?: (step: string, ms: number) => void;
  readonly verbose?: boolean;
  /** Replaces the service's streaming function (tests of the streaming path). */
  readonly streamHandler?: LocalStreamHandler;
  readonly streamPatterns?: readonly string[];
  /** Where local secrets (the encryption keyring) are kept; undefined makes new ones. */
  readonly secretsDir?: string | undefined;
  /** Run DynamoDB Local in its own process group (npm start: a terminal's Ctrl-C must not stop it first). */
  readonly detachEmulators?: boolean;
  /** More handler environment (limits, lifetimes) over the defaults. */
  readonly env?: Readonly<Record<string, string>>;
  /** The first admin; nothing is created without it. */
  readonly bootstrapAdmin?: { readonly email: string; readonly password: string };
  /** How many API requests the front gives serverless-offline at once (local/admission.ts); the front's defaults. */
  readonly admission?: AdmissionLimits;
  /**
   * Before answering, call every HTTP function (and the stream function) once, so that none is loaded by a user's
   * first request: serverless-offline runs the handlers in its own process and imports a function's bundle on its
   * first call (~100-200 ms each, the whole process held meanwhile), which made a cold stack shed load (npm start).
   */
  readonly warm?: boolean;
  /**
   * Puts something between the handlers and the emulators (tests/support/faults.ts: a proxy that injects faults):
   * given the emulators' endpoints, answers the ones the handlers use; the queue URLs follow the SQS one. The
   * stack's own set-up and its pollers (Lambda's event-source mapping) keep talking to the emulators directly.
   */
  readonly awsEndpoints?: (emulators: {
    readonly dynamodb: string;
    readonly sqs: string;
  }) => Promise<{ readonly dynamodb: string; readonly sqs: string }>;
  /** Programs built as another version than their sources say (tests of the agent's update: a newer release). */
  readonly programVersions?: Partial<Record<ProgramName, string>>;
  /**
   * The table's DynamoDB stream and its consumer (the viewers' resource lists, issue 36): on unless false, or unless
   * LOCAL_TABLE_STREAMS=off. The test run turns it off for the stacks that do not push lists (tests/support/worker-env.ts):
   * DynamoDB Local answers a stream read slower the more stream records it holds for all its tables, and every stack
   * polls its stream four times a second, so with streams everywhere the whole suite ran ~50 % slower.
   */
  readonly tableStreams?: boolean;
}

/** One request per function that loads it and answers at once without a credential (401, 404, 400...). */
export const warmUpPaths = (definition: Pick<ServiceDefinition, 'httpEvents'>): string[] => {
  const byFunction = new Map<string, string>();
  for (const event of definition.httpEvents) {
    if (byFunction.has(event.functionName)) continue;
    const path = event.path === '*' ? '/api/v1/warm-up' : event.path.replace(/\{[^}]+\}/g, 'warm-up');
    byFunction.set(event.functionName, path);
  }
  return [...byFunction.values(), '/api/v1/sse/targets'];
};

export interface Stack {
  readonly baseUrl: string;
  readonly port: number;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  readonly external: boolean;
  readonly tables: Readonly<Record<string, string>>;
  readonly queues: Readonly<Record<string, LocalQueue>>;
  /** The environment every handler runs with. */
  readonly env: Readonly<Record<string, string>>;
  readonly childPids: readonly number[];
  readonly bootstrapAdmin: 'created' | 'exists' | 'none';
  /** The one-file programs its front serves (`/agent/...`, `/cli/...`; programs/build.ts), by name. */
  readonly programs: Partial<Record<ProgramName, ProgramRelease>>;
  /** The files its front serves for them, by path (`stack.programs.agent.path` -> the agent's bundle). */
  readonly programFiles: ReadonlyMap<string, StaticFile>;
  stop(): Promise<void>;
}

const logicalIdOf = (value: unknown): string | undefined =>
  typeof value === 'object' && value !== null && typeof (value as { Ref?: unknown }).Ref === 'string'
    ? (value as { Ref: string }).Ref
    : undefined;

/** Variables whose cloud value names the WebSocket API: the local stack sets them to its own ports. */
const SET_BY_STACK = new Set(['AGENT_SOCKET_URL', 'AGENT_SOCKET_ENDPOINT', 'AGENT_RELEASE']);

/** provider.environment with every table and queue reference turned into its local name or URL. */
export const handlerEnvironment = (
  definition: ServiceDefinition,
  tables: Readonly<Record<string, string>>,
  queues: Readonly<Record<string, LocalQueue>>,
  endpoints: { dynamodb: string; sqs: string },
): Record<string, string> => {
  const env: Record<string, string> = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    // Locally the pinned SDK runs on Node 20; the cloud runtime is Node 22 (README, "Node versions").
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  for (const [name, value] of Object.entries(definition.environment)) {
    if (SET_BY_STACK.has(name)) continue;
    const ref = logicalIdOf(value);
    const table = definition.tables.find((t) => t.logicalId === ref || t.name === value);
    if (table !== undefined) env[name] = tables[table.logicalId] ?? table.name;
    else if (ref !== undefined && queues[ref] !== undefined) env[name] = queues[ref].url;
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      env[name] = String(value);
    else throw new Error(`provider.environment.${name}: cannot resolve ${JSON.stringify(value)} locally`);
  }
  return env;
};

/**
 * The visibility timeout of the local queues, in seconds. The cloud's (infra/resources.yml) is six times the
 * consumer's Lambda timeout, as AWS advises; the local pollers run consumers in-process with no such timeout, so
 * the local queues keep 60 s: a failed message comes back within a minute, as the tests and `npm start` expect.
 */
export const LOCAL_VISIBILITY_TIMEOUT_SECONDS = 60;

/** The queues of the definition as the local stack creates them (only the visibility timeout differs). */
export const localQueues = (queues: ServiceDefinition['queues']): ServiceDefinition['queues'] =>
  queues.map((queue) =>
    queue.attributes['VisibilityTimeout'] === undefined
      ? queue
      : { ...queue, attributes: { ...queue.attributes, VisibilityTimeout: String(LOCAL_VISIBILITY_TIMEOUT_SECONDS) } },
  );

/** What every phase of a start shares: the options, the log, the stops so far (run in reverse), the step timer. */
interface Startup extends StartSteps {
  readonly options: StackOptions;
}

interface Emulators {
  readonly external: string | undefined;
  readonly prefix: string;
  readonly dynamoEndpoint: string;
  /** DynamoDB Local starting (a JVM, seconds): settled with serverless-offline; undefined when not ours. */
  readonly dynamoStarting: Promise<Emulator | undefined>;
  readonly sqsEndpoint: string;
}

/** Phase 1: the SQS emulator at once, DynamoDB Local started (not awaited), or the shared or external ones. */
const startEmulators = async ({ options, stops, done }: Startup, definition: ServiceDefinition): Promise<Emulators> => {
  const external = process.env['AWS_ENDPOINT_URL'];
  const prefix = options.namePrefix ?? '';
  let sqs: Emulator | undefined;
  let dynamoStarting: Promise<Emulator | undefined> = Promise.resolve(undefined);
  let dynamoEndpoint = external ?? '';
  const sharedDynamo =
    options.dynamoEndpoint ??
    (options.dynamoPort === undefined && options.dataDir === undefined && prefix !== ''
      ? process.env['DEPLOYER_DYNAMODB_ENDPOINT'] || undefined
      : undefined);
  if (sharedDynamo !== undefined && prefix === '')
    throw new Error('a stack on a shared DynamoDB needs a namePrefix of its own');
  if (external === undefined) {
    sqs = await startSqs({ port: options.sqsPort ?? 0 });
    stops.push(() => sqs!.stop());
    done('SQS emulator (local-aws-sqs)');
  }
  if (external === undefined && sharedDynamo !== undefined) {
    dynamoEndpoint = sharedDynamo;
    // The tables go last, after everything that uses them (stops run in reverse), as an own emulator would.
    stops.push(async () => {
      const client = new DynamoDBClient({
        endpoint: sharedDynamo,
        region: 'us-east-1',
        credentials: LOCAL_CREDENTIALS,
      });
      for (const table of definition.tables)
        await client.send(new DeleteTableCommand({ TableName: prefix + table.name })).catch(() => undefined);
      client.destroy();
    });
  }
  if (external === undefined && sharedDynamo === undefined) {
    const dynamoPort = options.dynamoPort ?? (await freePort());
    dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
    const dynamoSince = Date.now();
    dynamoStarting = startDynamo({
      port: dynamoPort,
      dataDir: options.dataDir,
      detached: options.detachEmulators ?? false,
    }).then((emulator) => {
      stops.push(() => emulator.stop());
      done('DynamoDB Local', dynamoSince);
      return emulator;
    });
    dynamoStarting.catch(() => undefined); // awaited later; a quick failure (no Java) must not go unhandled
  }
  return { external, prefix, dynamoEndpoint, dynamoStarting, sqsEndpoint: external ?? sqs!.endpoint };
};

interface Configured {
  /** The front's port, held from now on (the handlers' environment names it long before the front serves). */
  readonly port: number;
  readonly reserved: Awaited<ReturnType<typeof reservePort>> | undefined;
  readonly websocketPort: number;
  readonly programs: Awaited<ReturnType<typeof buildPrograms>>;
  readonly env: Record<string, string>;
}

/** The agent release the handlers name (AGENT_RELEASE), as the front serves it. */
const agentReleaseVariable = (agentRelease: ProgramRelease | undefined): string =>
  agentRelease === undefined
    ? ''
    : JSON.stringify({
        version: agentRelease.version,
        sha256: agentRelease.sha256,
        size: agentRelease.size,
        path: agentRelease.path,
      });

/** Phase 2: the ports, the programs, and the environment every handler (offline and in-process) runs with. */
const configure = async (
  { options, stops, done }: Startup,
  definition: ServiceDefinition,
  emulators: Emulators,
  tableNames: Readonly<Record<string, string>>,
  queues: Readonly<Record<string, LocalQueue>>,
): Promise<Configured> => {
  const { dynamoEndpoint, sqsEndpoint } = emulators;
  const reserved = options.port === 0 ? await reservePort() : undefined;
  if (reserved !== undefined)
    stops.push(
      () => new Promise<void>((done) => (reserved.server.listening ? reserved.server.close(() => done()) : done())),
    );
  const port = reserved?.port ?? options.port;
  const websocketPort = options.websocketPort || (await freePort());
  // The programs first: the handlers' environment names the agent release the front serves (AGENT_RELEASE).
  const programsSince = Date.now();
  const programs = await buildPrograms({
    server: `http://localhost:${port}`,
    ...(options.programVersions === undefined ? {} : { versions: options.programVersions }),
  });
  done(`programs (${Object.keys(programs.releases).join(', ')})`, programsSince);
  const handlerEndpoints = (await options.awsEndpoints?.({ dynamodb: dynamoEndpoint, sqs: sqsEndpoint })) ?? {
    dynamodb: dynamoEndpoint,
    sqs: sqsEndpoint,
  };
  // The SDK sends an SQS call to its queue URL's host: the handlers' queue URLs name their SQS endpoint. The URL an
  // emulator answered names the emulator itself, also behind another endpoint (AWS_ENDPOINT_URL), so its origin is
  // replaced whatever it is: a handler's call never goes around the endpoint it was given.
  const handlerQueues = Object.fromEntries(
    Object.entries(queues).map(([id, q]) => [
      id,
      { ...q, url: `${new URL(handlerEndpoints.sqs).origin}${new URL(q.url).pathname}` },
    ]),
  );
  const env = {
    ...handlerEnvironment(definition, tableNames, handlerQueues, handlerEndpoints),
    PUBLIC_BASE_URL: `http://localhost:${port}`,
    // Agents connect through the front (one origin, as in the cloud behind its own domain); pushes go straight to
    // serverless-offline's @connections emulation.
    AGENT_SOCKET_URL: `ws://localhost:${port}${AGENT_SOCKET_PATH}`,
    AGENT_SOCKET_ENDPOINT: `http://127.0.0.1:${websocketPort}`,
    // Browser pages served from the stack's own origin (a console); CORS_ORIGINS in options.env adds others.
    CORS_ORIGINS: process.env['CORS_ORIGINS'] || `http://localhost:${port},http://127.0.0.1:${port}`,
    ENCRYPTION_KEYS: await localKeyring(options.secretsDir),
    AGENT_RELEASE: agentReleaseVariable(programs.releases.agent),
    // The handlers follow the key file as it changes (npm run rotate-keys; infra/crypto/key-ring-source.ts).
    ...(options.secretsDir === undefined ? {} : { ENCRYPTION_KEYS_FILE: keyFilePath(options.secretsDir) }),
    ...(options.bootstrapAdmin === undefined
      ? {}
      : {
          BOOTSTRAP_ADMIN_EMAIL: options.bootstrapAdmin.email,
          BOOTSTRAP_ADMIN_PASSWORD: options.bootstrapAdmin.password,
        }),
    ...options.env,
  };
  return { port, reserved, websocketPort, programs, env };
};

/** Phase 5: the front on the one origin: the console and the programs, the API, the agents' socket, the streams. */
const startFrontDoor = async (
  { options, stops }: Startup,
  configured: Configured,
  urls: { readonly api: string; readonly websocketPort: number; readonly streams: string },
  consoleFiles: Awaited<ReturnType<typeof buildConsole>>,
) => {
  const { env, reserved, programs } = configured;
  const { STREAM_PATH_PATTERNS } = await import('../functions/streams/routes.js');
  const front = await startFront({
    port: configured.port,
    ...(reserved === undefined ? {} : { listening: reserved.server }),
    console: new Map([...consoleFiles, ...programs.files]),
    apiUrl: urls.api,
    socketUrl: `http://127.0.0.1:${urls.websocketPort}`,
    streamUrl: urls.streams,
    streamPatterns: options.streamPatterns ?? STREAM_PATH_PATTERNS,
    corsOrigins: parseCorsOrigins(env['CORS_ORIGINS']),
    ...(options.admission === undefined ? {} : { admission: options.admission }),
    rateLimit: {
      ratePerSecond: Number(env['RATE_LIMIT_PER_SECOND'] ?? 100),
      burst: Number(env['RATE_LIMIT_BURST'] ?? 200),
    },
  });
  stops.push(() => front.stop());
  return front;
};

/** Phase 6: the first admin (when asked for) and, for npm start, every function called once. */
const finishStart = async (
  { options, done }: Startup,
  definition: ServiceDefinition,
  frontUrl: string,
): Promise<Stack['bootstrapAdmin']> => {
  let bootstrapAdmin: Stack['bootstrapAdmin'] = 'none';
  if (options.bootstrapAdmin !== undefined) {
    const { ensureBootstrapAdmin } = await import('../domain/identity/bootstrap-admin.js');
    const { identityDeps } = await import('../functions/shared/identity-wiring.js');
    bootstrapAdmin = await ensureBootstrapAdmin(identityDeps(), options.bootstrapAdmin);
    done('first admin');
  }
  if (options.warm === true) {
    const paths = warmUpPaths(definition);
    const since = Date.now();
    await Promise.all(
      paths.map((path) =>
        fetch(`${frontUrl}${path}`, { signal: AbortSignal.timeout(30_000) })
          .then((answer) => answer.arrayBuffer())
          .catch(() => undefined),
      ),
    );
    done(`functions warmed (${paths.length})`, since);
  }
  return bootstrapAdmin;
};

/** Settles every promise before answering, so a failure of one never leaves another running unstopped. */
const allStarted = async <T extends readonly unknown[]>(
  starting: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> => {
  const settled = await Promise.allSettled(starting);
  for (const one of settled) if (one.status === 'rejected') throw one.reason;
  return settled.map((one) => (one as PromiseFulfilledResult<unknown>).value) as unknown as T;
};

export const startStack = async (options: StackOptions): Promise<Stack> => {
  let lastStep = Date.now();
  const stops: (() => Promise<void>)[] = [];
  const startup: Startup = {
    options,
    log: options.log ?? (() => undefined),
    stops,
    done: (step, since = lastStep) => {
      const now = Date.now();
      options.progress?.(step, now - since);
      lastStep = Math.max(lastStep, now);
    },
  };
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const loaded = await loadServiceDefinition();
    const streamsOn = options.tableStreams ?? process.env['LOCAL_TABLE_STREAMS'] !== 'off';
    const definition = streamsOn
      ? loaded
      : {
          ...loaded,
          tables: loaded.tables.map((table) => ({ ...table, streamViewType: undefined })),
          streamConsumers: [],
        };
    const emulators = await startEmulators(startup, definition);
    const { prefix, dynamoEndpoint, sqsEndpoint } = emulators;
    const sqsClient = new SQSClient({ endpoint: sqsEndpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
    stops.push(async () => sqsClient.destroy());
    const queues = await ensureQueues(sqsClient, localQueues(definition.queues), (q) => prefix + q.name);
    startup.done(`queues (${Object.keys(queues).length})`);

    const tableNames = Object.fromEntries(definition.tables.map((t) => [t.logicalId, prefix + t.name]));
    const configured = await configure(startup, definition, emulators, tableNames, queues);
    const { env } = configured;
    // In-process handlers (pollers, streams, the bootstrap) read the same configuration. They parse it once per
    // process (infra/config.ts), so a process serves one stack's tables: tests that need in-process handlers of
    // a second stack must run it in another test file (vitest gives each file its own process).
    Object.assign(process.env, env);

    // DynamoDB Local (a JVM), serverless-offline (esbuild + the framework) and the console's build run side by side.
    const [dynamo, { offline, websocketPort }, consoleFiles] = await allStarted([
      emulators.dynamoStarting,
      startFunctions(startup, env, {
        websocketPort: configured.websocketPort,
        fixed: options.websocketPort,
        verbose: options.verbose ?? false,
      }),
      buildConsole(),
    ] as const);
    const dynamoClient = new DynamoDBClient({
      endpoint: dynamoEndpoint,
      region: 'us-east-1',
      credentials: LOCAL_CREDENTIALS,
    });
    stops.push(async () => dynamoClient.destroy());
    await ensureTables(dynamoClient, definition.tables, (t) => tableNames[t.logicalId] ?? t.name);
    // Deployments stored before the list's slim index (gsi5) get their entries now, before anything serves.
    const indexed = await upgradeListIndex(DynamoDBDocumentClient.from(dynamoClient), tableNames['MainTable']!);
    startup.done(`tables (${definition.tables.length})${indexed > 0 ? `, ${indexed} deployments indexed` : ''}`);

    const streams = await startInProcessFunctions(startup, definition, queues, sqsClient, options, {
      client: dynamoClient,
      endpoint: dynamoEndpoint,
      names: tableNames,
    });
    const front = await startFrontDoor(
      startup,
      configured,
      { api: offline.url, websocketPort, streams: streams.url },
      consoleFiles,
    );
    startup.done('consumers, stream function, front');
    const bootstrapAdmin = await finishStart(startup, definition, front.url);

    return {
      bootstrapAdmin,
      baseUrl: front.url,
      port: front.port,
      dynamoEndpoint,
      sqsEndpoint,
      external: emulators.external !== undefined,
      tables: tableNames,
      queues,
      env,
      programs: configured.programs.releases,
      programFiles: configured.programs.files,
      childPids: [dynamo?.pid, offline.pid].filter((pid): pid is number => pid !== undefined),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
};
