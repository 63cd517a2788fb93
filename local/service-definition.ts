// Reads serverless.yml as the framework resolves it (`serverless print`) and extracts what the local stack
// must create: DynamoDB tables, SQS queues with their redrive policies, the SQS event-source mappings of the
// consumer functions, and the handlers' environment. Local and cloud resources therefore cannot drift.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVERLESS_BIN = join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js');
const SOURCES = [
  'serverless.yml',
  'infra/resources.yml',
  'infra/edge.yml',
  'infra/iam.yml',
  'infra/cors.cjs',
  'infra/agent-release.cjs',
  'package-lock.json',
];

/**
 * The environment this process started with: a stack copies its handlers' environment into process.env (in-process
 * handlers read it there), which must not count as the user's settings when a second stack starts in the process.
 */
const STARTING_ENVIRONMENT: NodeJS.ProcessEnv = { ...process.env };

/** The variables `npm start` sets for the handlers itself: never part of what serverless.yml resolves to. */
const STACK_VARIABLES = [
  'TABLE_NAME',
  'DISPATCH_QUEUE_URL',
  'ORCHESTRATOR_QUEUE_URL',
  'ANALYSIS_QUEUE_URL',
  'ESBUILD_WORK_FOLDER',
  'AGENT_SOCKET_URL',
  'AGENT_SOCKET_ENDPOINT',
  'AGENT_RELEASE',
] as const;

type Cfn = Record<string, unknown>;

export interface TableDefinition {
  readonly logicalId: string;
  readonly name: string;
  readonly attributeDefinitions: readonly { AttributeName: string; AttributeType: 'S' | 'N' | 'B' }[];
  readonly keySchema: readonly { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
  readonly globalSecondaryIndexes: readonly {
    IndexName: string;
    KeySchema: { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[];
    Projection: { ProjectionType: 'ALL' | 'KEYS_ONLY' | 'INCLUDE'; NonKeyAttributes?: string[] };
  }[];
  readonly ttlAttribute: string | undefined;
  /** The table's stream (StreamSpecification), e.g. NEW_AND_OLD_IMAGES; undefined without one. */
  readonly streamViewType?: string | undefined;
}

export interface QueueDefinition {
  readonly logicalId: string;
  readonly name: string;
  /** SQS attributes other than the redrive policy, as strings (VisibilityTimeout, MessageRetentionPeriod, ...). */
  readonly attributes: Readonly<Record<string, string>>;
  readonly deadLetter: { readonly logicalId: string; readonly maxReceiveCount: number } | undefined;
}

export interface ConsumerDefinition {
  readonly functionName: string;
  /** Module path without extension and export name, e.g. `functions/queues/dispatch-consumer` + `handler`. */
  readonly module: string;
  readonly exportName: string;
  readonly queueLogicalId: string;
  readonly batchSize: number;
  readonly maximumBatchingWindowSeconds: number;
  readonly reportBatchItemFailures: boolean;
}

/** A function fed by a table's stream (a `stream` event of type dynamodb); locally local/stream-poller.ts. */
export interface StreamConsumerDefinition {
  readonly functionName: string;
  readonly module: string;
  readonly exportName: string;
  readonly tableLogicalId: string;
  readonly batchSize: number;
}

/** A function run on a schedule (an EventBridge `schedule` event); locally a timer of the stack. */
export interface ScheduleDefinition {
  readonly functionName: string;
  readonly module: string;
  readonly exportName: string;
  /** As written, e.g. `rate(1 minute)`. */
  readonly rate: string;
}

export interface HttpEventDefinition {
  readonly functionName: string;
  /** `ANY` or a method. */
  readonly method: string;
  /** A path template, `{proxy+}` greedy; `*` is API Gateway's $default route. */
  readonly path: string;
}

export interface FunctionDefinition {
  readonly name: string;
  readonly module: string;
  readonly exportName: string;
}

export interface ServiceDefinition {
  readonly service: string;
  readonly functions: readonly FunctionDefinition[];
  readonly httpEvents: readonly HttpEventDefinition[];
  readonly tables: readonly TableDefinition[];
  readonly queues: readonly QueueDefinition[];
  readonly consumers: readonly ConsumerDefinition[];
  readonly streamConsumers: readonly StreamConsumerDefinition[];
  readonly schedules: readonly ScheduleDefinition[];
  /** provider.environment as resolved: strings, or CloudFormation intrinsics such as {Ref: X}. */
  readonly environment: Readonly<Record<string, unknown>>;
  readonly streamFunction: { readonly module: string; readonly exportName: string } | undefined;
}

const logicalIdOf = (value: unknown): string | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const ref = (value as Cfn)['Ref'];
  if (typeof ref === 'string') return ref;
  const getAtt = (value as Cfn)['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
};

const splitHandler = (handler: string): { module: string; exportName: string } => {
  const dot = handler.lastIndexOf('.');
  return { module: handler.slice(0, dot), exportName: handler.slice(dot + 1) };
};

/** Pure: the resolved framework configuration -> what the local stack needs. */
export const extractDefinition = (resolved: Cfn): ServiceDefinition => {
  const resources = ((resolved['resources'] as Cfn | undefined)?.['Resources'] ?? {}) as Record<
    string,
    { Type: string; Properties: Cfn }
  >;
  const tables: TableDefinition[] = [];
  const queues: QueueDefinition[] = [];
  for (const [logicalId, resource] of Object.entries(resources)) {
    const p = resource.Properties ?? {};
    if (resource.Type === 'AWS::DynamoDB::Table') {
      const ttl = p['TimeToLiveSpecification'] as { AttributeName?: string; Enabled?: boolean } | undefined;
      tables.push({
        logicalId,
        name: String(p['TableName'] ?? logicalId),
        attributeDefinitions: (p['AttributeDefinitions'] ?? []) as TableDefinition['attributeDefinitions'],
        keySchema: (p['KeySchema'] ?? []) as TableDefinition['keySchema'],
        globalSecondaryIndexes: (p['GlobalSecondaryIndexes'] ?? []) as TableDefinition['globalSecondaryIndexes'],
        ttlAttribute: ttl?.Enabled ? ttl.AttributeName : undefined,
        streamViewType: (p['StreamSpecification'] as { StreamViewType?: string } | undefined)?.StreamViewType,
      });
    }
    if (resource.Type === 'AWS::SQS::Queue') {
      const { QueueName, RedrivePolicy, ...rest } = p as { QueueName?: string; RedrivePolicy?: Cfn } & Cfn;
      const attributes = Object.fromEntries(
        Object.entries(rest)
          .filter(([, value]) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
          .map(([key, value]) => [key, String(value)]),
      );
      const deadLetterId = logicalIdOf(RedrivePolicy?.['deadLetterTargetArn']);
      queues.push({
        logicalId,
        name: String(QueueName ?? logicalId),
        attributes,
        deadLetter:
          deadLetterId === undefined
            ? undefined
            : { logicalId: deadLetterId, maxReceiveCount: Number(RedrivePolicy?.['maxReceiveCount'] ?? 10) },
      });
    }
  }
  const consumers: ConsumerDefinition[] = [];
  const streamConsumers: StreamConsumerDefinition[] = [];
  const schedules: ScheduleDefinition[] = [];
  const httpEvents: HttpEventDefinition[] = [];
  const functions: FunctionDefinition[] = [];
  let streamFunction: ServiceDefinition['streamFunction'];
  for (const [functionName, fn] of Object.entries((resolved['functions'] ?? {}) as Record<string, Cfn>)) {
    const handler = splitHandler(String(fn['handler']));
    functions.push({ name: functionName, ...handler });
    if ((fn['url'] as Cfn | undefined)?.['invokeMode'] === 'RESPONSE_STREAM') streamFunction = handler;
    for (const event of (fn['events'] ?? []) as Cfn[]) {
      const httpApi = event['httpApi'] as Cfn | string | undefined;
      if (httpApi !== undefined) {
        const [method, path] =
          typeof httpApi === 'string'
            ? httpApi === '*'
              ? ['ANY', '*']
              : httpApi.split(' ')
            : [String(httpApi['method']), String(httpApi['path'])];
        httpEvents.push({ functionName, method: String(method).toUpperCase(), path: String(path) });
      }
      const schedule = event['schedule'] as Cfn | string | undefined;
      if (schedule !== undefined)
        schedules.push({
          functionName,
          ...handler,
          rate: String(typeof schedule === 'string' ? schedule : schedule['rate']),
        });
      const stream = event['stream'] as Cfn | undefined;
      if (stream !== undefined && stream['type'] === 'dynamodb') {
        const tableLogicalId = logicalIdOf(stream['arn']);
        if (tableLogicalId === undefined)
          throw new Error(`function ${functionName}: a stream event must reference a table of this stack`);
        streamConsumers.push({
          functionName,
          ...handler,
          tableLogicalId,
          batchSize: Number(stream['batchSize'] ?? 100),
        });
      }
      const sqs = event['sqs'] as Cfn | string | undefined;
      if (sqs === undefined) continue;
      const mapping = typeof sqs === 'string' ? { arn: sqs } : sqs;
      const queueLogicalId = logicalIdOf(mapping['arn']);
      if (queueLogicalId === undefined)
        throw new Error(`function ${functionName}: an sqs event must reference a queue of this stack with Fn::GetAtt`);
      consumers.push({
        functionName,
        ...handler,
        queueLogicalId,
        batchSize: Number(mapping['batchSize'] ?? 10),
        maximumBatchingWindowSeconds: Number(mapping['maximumBatchingWindow'] ?? 0),
        reportBatchItemFailures: mapping['functionResponseType'] === 'ReportBatchItemFailures',
      });
    }
  }
  const provider = (resolved['provider'] ?? {}) as Cfn;
  return {
    service: String(resolved['service']),
    functions,
    httpEvents,
    tables,
    queues,
    consumers,
    streamConsumers,
    schedules,
    environment: (provider['environment'] ?? {}) as Record<string, unknown>,
    streamFunction,
  };
};

/**
 * serverless.yml as the framework resolves it for a stage (`serverless print`, about 4 s), cached by the content of
 * the files that define the stack and by the value of every `${env:...}` they read: a variable set (or changed)
 * since the last start takes effect on the next one (README, "Configuration").
 */
export const loadResolvedService = async (stage = 'local'): Promise<Cfn> => {
  // Only the user's variables are wanted: clear the ones npm start sets for the handlers.
  const env: NodeJS.ProcessEnv = {
    ...STARTING_ENVIRONMENT,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
  };
  for (const key of STACK_VARIABLES) delete env[key];
  const hash = createHash('sha256');
  const read = new Set<string>();
  for (const file of SOURCES) {
    const text = await readFile(join(ROOT, file)).catch(() => Buffer.alloc(0));
    hash.update(text);
    for (const match of text.toString('utf8').matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)/g)) read.add(match[1]!);
  }
  for (const name of [...read].sort()) hash.update(`\0${name}=${env[name] ?? '\0unset'}`);
  const suffix = stage === 'local' ? '' : `-${stage}`;
  const cacheFile = join(
    ROOT,
    'node_modules',
    '.cache',
    'deployer',
    `service-${hash.digest('hex').slice(0, 16)}${suffix}.json`,
  );
  const cached = await readFile(cacheFile, 'utf8').catch(() => undefined);
  if (cached !== undefined) return JSON.parse(cached) as Cfn;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [SERVERLESS_BIN, 'print', '--format', 'json', '--stage', stage],
    {
      cwd: ROOT,
      env,
      maxBuffer: 32 * 1024 * 1024,
    },
  );
  const resolved = JSON.parse(stdout.slice(stdout.indexOf('{'))) as Cfn;
  await mkdir(dirname(cacheFile), { recursive: true });
  await writeFile(cacheFile, JSON.stringify(resolved));
  return resolved;
};

/** What the local stack needs, from serverless.yml resolved for stage `local`. */
export const loadServiceDefinition = async (): Promise<ServiceDefinition> =>
  extractDefinition(await loadResolvedService('local'));
