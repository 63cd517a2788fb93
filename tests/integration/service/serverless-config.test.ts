// serverless.yml against the route tables and the packaged CloudFormation template: every route reaches its
// area's function, the stream paths reach the streaming function, the stack stays deployable, every function's
// role grants exactly the AWS calls its bundled code makes, the queues suit their consumers, and CORS is
// configured from CORS_ORIGINS, and the packaged template follows the resource types' published schemas.
import { DEPLOYMENT_LIST_ATTRIBUTES } from '../../../infra/dynamodb/deployment-list-index.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes, areas, documentedRoutes } from '../../../functions/http/routes.js';
import { STREAM_PATH_PATTERNS, streamRoutes } from '../../../functions/streams/routes.js';
import { buildConsole } from '../../../console/build.js';
import { CONSOLE_HEADERS } from '../../../local/console-assets.js';
import { buildPrograms } from '../../../programs/build.js';
import { ENCRYPTION_INDEX } from '../../../infra/dynamodb/encryption-store.js';
import { keys } from '../../../infra/dynamodb/keys.js';
import { SECRET_NAMES } from '../../../infra/secrets.js';
import { patternMatcher } from '../../../local/front.js';
import {
  loadServiceDefinition,
  ROOT,
  type HttpEventDefinition,
  type ServiceDefinition,
} from '../../../local/service-definition.js';
import { LOCAL_VISIBILITY_TIMEOUT_SECONDS, localQueues } from '../../../local/stack.js';
import { awsCallsOf, type FunctionCalls } from './aws-calls.js';
import { cyclesOf, dependenciesOf } from './template-graph.js';
import { templateSchemaProblems, type Template } from './template-schema.js';
import { importZipAlone, zipEnvironment } from './zip-imports.js';

let definition: ServiceDefinition;
beforeAll(async () => {
  definition = await loadServiceDefinition();
}, 60_000);

/** Whether an API Gateway route (`{proxy+}` greedy, `{x}` one segment) serves a concrete route template. */
const serves = (event: HttpEventDefinition, method: string, path: string): boolean => {
  if (event.path === '*') return false;
  if (event.method !== 'ANY' && event.method !== method) return false;
  const pattern = event.path
    .split('/')
    .map((segment) =>
      segment === '{proxy+}' ? '.+' : /^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${pattern}$`).test(path.replace(/\{[^}]+\}/g, 'x'));
};

describe('serverless.yml', () => {
  it('defines the table, the dispatch queue with its dead-letter queue, and the streaming function', () => {
    expect(definition.tables.map((t) => t.logicalId)).toEqual(['MainTable']);
    expect(definition.tables[0]?.ttlAttribute).toBe('ttl');
    const dispatch = definition.queues.find((q) => q.logicalId === 'DispatchQueue');
    expect(dispatch?.deadLetter).toEqual({ logicalId: 'DispatchDeadLetterQueue', maxReceiveCount: 5 });
    expect(definition.streamFunction).toEqual({ module: 'functions/streams/router', exportName: 'handler' });
  });

  it('projects to the deployments list index (gsi5) exactly the attributes the list reads from it', () => {
    const gsi5 = definition.tables[0]?.globalSecondaryIndexes.find((index) => index.IndexName === 'gsi5');
    expect(gsi5?.Projection).toEqual({ ProjectionType: 'INCLUDE', NonKeyAttributes: [...DEPLOYMENT_LIST_ATTRIBUTES] });
  });

  it('routes every endpoint to the function of its area and to no other', () => {
    for (const [area, routes] of Object.entries(areas)) {
      const own = definition.httpEvents.filter((e) => e.functionName === area);
      expect(own.length, `serverless.yml has no httpApi events for area ${area}`).toBeGreaterThan(0);
      for (const { method, path } of routes) {
        expect(
          own.some((e) => serves(e, method, path)),
          `${method} ${path} is not served by function ${area}`,
        ).toBe(true);
        const others = definition.httpEvents.filter((e) => e.functionName !== area && serves(e, method, path));
        expect(others, `${method} ${path} is also served by another function`).toEqual([]);
      }
    }
  });

  it('has a catch-all route for the NOT_FOUND envelope', () => {
    expect(definition.httpEvents).toContainEqual({ functionName: 'notFound', method: 'ANY', path: '*' });
  });

  it('keeps stream paths and HTTP paths apart', () => {
    const isStream = patternMatcher(STREAM_PATH_PATTERNS);
    for (const { path } of allRoutes()) expect(isStream(path.replace(/\{[^}]+\}/g, 'x')), path).toBe(false);
    for (const { path } of streamRoutes) expect(isStream(path.replace(/\{[^}]+\}/g, 'x')), path).toBe(true);
  });

  it('gives every operation a unique id and every method and path one endpoint', () => {
    const routes = documentedRoutes();
    const ids = routes.map((r) => r.handler.spec.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string[]>>;
};

/** The packaging's custom domain (osls parameters domainName and certificateArn). */
const CUSTOM_DOMAIN = 'deploy.example.com';
const CERTIFICATE_ARN = 'arn:aws:acm:us-east-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';

/** Where the packaging's alarms are mailed (osls parameter alarmEmail). */
const ALARM_EMAIL = 'ops@example.com';

/** An EDGE_ORIGIN_SECRET in the packaging's environment, which the template must not contain. */
const PLAIN_EDGE_SECRET = 'plain-edge-secret-from-the-environment';

/** The packaging's CORS_ORIGINS (spaces and a repeat on purpose: they are trimmed and deduplicated). */
const PACKAGED_CORS_ORIGINS = 'https://console.example.com, https://admin.example.com,https://console.example.com';

/** A CloudFormation resource reference as a short name: `MainTable`, `MainTable/index/*`, or the literal string. */
const resourceName = (value: unknown): string => {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  // A resource of this stack whose Ref is its ARN (a Secrets Manager secret).
  if (typeof v['Ref'] === 'string' && !v['Ref'].startsWith('AWS::')) return v['Ref'];
  const getAtt = v['Fn::GetAtt'];
  if (Array.isArray(getAtt) && getAtt[1] === 'Arn') return String(getAtt[0]);
  // A table's stream: `<table>/stream`.
  if (Array.isArray(getAtt) && getAtt[1] === 'StreamArn') return `${String(getAtt[0])}/stream`;
  const join = v['Fn::Join'];
  if (Array.isArray(join) && join[0] === '/' && Array.isArray(join[1]))
    return (join[1] as unknown[]).map(resourceName).join('/');
  // An execute-api ARN built with Join '': the API it names (`arn:...:${WebsocketsApi}/<stage>/*/@connections/*`).
  if (Array.isArray(join) && join[0] === '' && Array.isArray(join[1])) {
    const parts = join[1] as unknown[];
    // An SSM parameter's ARN (`arn:...:ssm:...:parameter/<name>`): `SSMParameter:/<name>`.
    if (parts.includes(':ssm:') && parts.at(-2) === ':parameter' && typeof parts.at(-1) === 'string')
      return `SSMParameter:${String(parts.at(-1))}`;
    const api = parts.find(
      (p) =>
        typeof p === 'object' && p !== null && 'Ref' in p && !String((p as { Ref: string }).Ref).startsWith('AWS::'),
    );
    const tail = parts.at(-1);
    if (api !== undefined && typeof tail === 'string' && tail.endsWith('/*/@connections/*'))
      return `${(api as { Ref: string }).Ref}`;
  }
  throw new Error(`unexpected resource reference ${JSON.stringify(value)}`);
};
/** CloudFront's managed cache policy that caches (Managed-CachingOptimized); the others here use CachingDisabled. */
const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
type DistributionConfig = {
  DefaultRootObject: string;
  CacheBehaviors: {
    PathPattern: string;
    TargetOriginId: string;
    CachePolicyId: string;
    ResponseHeadersPolicyId?: unknown;
  }[];
};
/** Whether a CloudFront path pattern (`*` any characters, `/` included; `?` exactly one) matches a path. */
const globMatches = (pattern: string, path: string): boolean =>
  new RegExp(
    `^${pattern
      .replace(/[.+^$()|[\]\\{}]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  ).test(path);
const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
/** serverless's logical id prefix of a function: `notFound` -> `NotFound`. */
const logicalPrefix = (functionName: string): string => functionName.charAt(0).toUpperCase() + functionName.slice(1);

/** The queue each SQS adapter sends to (and the health probe reads), as constructed in functions/shared. */
const QUEUE_OF_MODULE: Readonly<Record<string, string>> = {
  'infra/sqs/dispatch-queue.ts': 'DispatchQueue',
  'infra/sqs/engine-queue.ts': 'OrchestratorQueue',
  'infra/sqs/analysis-queue.ts': 'AnalysisQueue',
  'infra/sqs/webhook-queue.ts': 'WebhookQueue',
  'infra/health-probes.ts': 'DispatchQueue',
};

/**
 * Functions whose bundle carries code they never run, and the function whose calls they make instead: docs bundles
 * every route table for the operations' specs (the OpenAPI document) and runs none of their handlers, only the
 * shell that every unknown path runs too (the general rate limit).
 */
const RUNS_ONLY_LIKE: Readonly<Record<string, string>> = { docs: 'notFound' };

/** Parameter Store's path for reading a Secrets Manager secret through GetParameter. */
const SECRETS_MANAGER_REFERENCE = '/aws/reference/secretsmanager/';

/** The grants (`action resource`) a function's code, events and secret parameters need. */
const neededGrants = (
  functionName: string,
  calls: FunctionCalls,
  consumedQueues: readonly string[],
  secretParameters: readonly string[],
  secretOfName: Readonly<Record<string, string>>,
  failureQueues: readonly string[] = [],
): string[] => {
  const grants = new Set<string>([
    `logs:CreateLogStream ${logicalPrefix(functionName)}LogGroup`,
    `logs:PutLogEvents ${logicalPrefix(functionName)}LogGroup`,
  ]);
  // infra/secrets.ts reads each parameter the function's environment names (infra/ssm-parameter.ts: GetParameter,
  // decrypted; a signed request, not an SDK command, so the bundle analysis does not see it).
  for (const name of secretParameters) {
    grants.add(`ssm:GetParameter SSMParameter:${name}`);
    // A reference to a Secrets Manager secret: Parameter Store reads it with the caller's rights on the secret.
    if (name.startsWith(SECRETS_MANAGER_REFERENCE)) {
      const secret = secretOfName[name.slice(SECRETS_MANAGER_REFERENCE.length)];
      if (secret === undefined) throw new Error(`${functionName} reads ${name}, a secret the stack does not make`);
      grants.add(`secretsmanager:GetSecretValue ${secret}`);
    }
  }
  for (const { module, action } of calls.calls) {
    if (action.startsWith('dynamodb:')) {
      // A Scan reads the sparse encryption index (infra/dynamodb/encryption-store.ts); only the index backfill
      // (infra/dynamodb/encryption-backfill.ts, the rotation's) reads the table.
      if (action === 'dynamodb:Scan')
        grants.add(
          module === 'infra/dynamodb/encryption-backfill.ts'
            ? `${action} MainTable`
            : `${action} MainTable/index/${ENCRYPTION_INDEX}`,
        );
      else grants.add(`${action} MainTable`);
      if (action === 'dynamodb:Query' && calls.indexModules.length > 0) grants.add(`${action} MainTable/index/*`);
    } else if (action === 'sqs:SendMessage' || action === 'sqs:GetQueueAttributes') {
      const queue = QUEUE_OF_MODULE[module];
      if (queue === undefined) throw new Error(`${module} makes ${action}: say which queue in QUEUE_OF_MODULE`);
      grants.add(`${action} ${queue}`);
    } else if (action === 'execute-api:ManageConnections') grants.add(`${action} WebsocketsApi`);
    else throw new Error(`${functionName}: ${module} makes ${action}, which this test does not map to a resource yet`);
  }
  // The event source mapping polls on the function's behalf with the function's role: a table's stream, read
  // (and a failed batch recorded on its failure queue), or a queue.
  for (const source of consumedQueues.filter((s) => s.endsWith('/stream')))
    for (const action of [
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ])
      grants.add(`${action} ${source}`);
  for (const queue of failureQueues) grants.add(`sqs:SendMessage ${queue}`);
  for (const queue of consumedQueues.filter((s) => !s.endsWith('/stream')))
    for (const action of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'])
      grants.add(`${action} ${queue}`);
  return [...grants].sort();
};

describe('serverless package', () => {
  let template: { Resources: Record<string, Resource> };
  let artifacts: string[];
  let out: string;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'deployer-package-'));
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'),
        'package',
        '--stage',
        'ci',
        '--package',
        out,
        `--param=domainName=${CUSTOM_DOMAIN}`,
        `--param=certificateArn=${CERTIFICATE_ARN}`,
        '--param=tracing=true',
        `--param=alarmEmail=${ALARM_EMAIL}`,
      ],
      {
        cwd: ROOT,
        // Its own build folder: packaging cleans the folder it builds in, and stacks of other tests build too.
        env: {
          ...process.env,
          TABLE_NAME: '',
          DISPATCH_QUEUE_URL: '',
          ORCHESTRATOR_QUEUE_URL: '',
          CORS_ORIGINS: PACKAGED_CORS_ORIGINS,
          // A value the old template copied into CloudFront's origin header: it must reach nothing now.
          EDGE_ORIGIN_SECRET: PLAIN_EDGE_SECRET,
          ESBUILD_WORK_FOLDER: join('.build', `package-${process.pid}`),
          SLS_TELEMETRY_DISABLED: '1',
        },
      },
    );
    template = JSON.parse(await readFile(join(out, 'cloudformation-template-update-stack.json'), 'utf8'));
    artifacts = await readdir(out);
    await rm(join(ROOT, '.build', `package-${process.pid}`), { recursive: true, force: true });
    // Packaging bundles 18 functions: about a minute alone, over two on two cores shared with the other test files.
  }, 300_000);

  it('builds without cloud credentials, one artifact per function', () => {
    expect(artifacts).toEqual(
      expect.arrayContaining([
        'meta.zip',
        'docs.zip',
        'auth.zip',
        'admin.zip',
        'oauth.zip',
        'notFound.zip',
        'stream.zip',
      ]),
    );
  });

  it('imports every function’s handler from its zip alone, with only its environment (what ships is what runs)', async () => {
    const times: string[] = [];
    for (const fn of definition.functions) {
      const resource = template.Resources[`${logicalPrefix(fn.name)}LambdaFunction`]!;
      const variables = (resource.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
      const env = zipEnvironment(fn.name, variables);
      const handler = String(resource.Properties['Handler']);
      const result = await importZipAlone(join(out, `${fn.name}.zip`), handler, env, join(ROOT, 'node_modules'));
      expect(result.error, `${fn.name}.zip (${handler})`).toBeUndefined();
      times.push(`${fn.name.padEnd(14)} ${result.ms!.toFixed(0).padStart(5)} ms`);
    }
    console.log(`Handler import time, each zip alone on Node ${process.versions.node}:\n${times.join('\n')}`);
  }, 300_000);

  it('ships the native Argon2 binary for Lambda (linux arm64), not this machine’s', async () => {
    // Zip headers keep file names uncompressed, so the names can be looked for in the bytes.
    const zip = await readFile(join(out, 'auth.zip'));
    expect(zip.includes('argon2.linux-arm64-gnu.node')).toBe(true);
    expect(zip.includes('argon2.linux-x64-gnu.node')).toBe(false);
  });

  it('ships Argon2 only in the zips of the functions that hash passwords (auth, admin, oauth)', async () => {
    const withArgon2: string[] = [];
    for (const fn of definition.functions) {
      const zip = await readFile(join(out, `${fn.name}.zip`));
      if (zip.includes('@node-rs/argon2/package.json') || zip.includes('argon2.linux-arm64-gnu.node'))
        withArgon2.push(fn.name);
    }
    expect(withArgon2.sort()).toEqual(['admin', 'auth', 'oauth']);
  });

  it('keeps the streaming function URL in RESPONSE_STREAM mode, reachable only through CloudFront', () => {
    const urls = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Url');
    expect(urls).toHaveLength(1);
    expect(urls[0]?.Properties).toMatchObject({ InvokeMode: 'RESPONSE_STREAM', AuthType: 'AWS_IAM' });
    const edge = template.Resources['Edge']?.Properties as {
      DistributionConfig: { CacheBehaviors: { PathPattern: string; TargetOriginId: string }[] };
    };
    const toStreams = edge.DistributionConfig.CacheBehaviors.filter((b) => b.TargetOriginId !== 'console');
    expect(toStreams.map((b) => [b.PathPattern, b.TargetOriginId])).toEqual(
      STREAM_PATH_PATTERNS.map((p) => [p, 'streams']),
    );
  });

  it('serves the console from a private bucket that only the distribution reads, under the console’s headers', () => {
    const resources = template.Resources as Record<string, { Type: string; Properties?: Record<string, unknown> }>;
    const edge = resources['Edge']?.Properties as {
      DistributionConfig: {
        DefaultRootObject: string;
        CacheBehaviors: {
          PathPattern: string;
          TargetOriginId: string;
          AllowedMethods: string[];
          CachePolicyId: string;
        }[];
        DefaultCacheBehavior: { TargetOriginId: string };
      };
    };
    const config = edge.DistributionConfig;
    expect(config.DefaultRootObject).toBe('index.html');
    const consolePaths = config.CacheBehaviors.filter((b) => b.TargetOriginId === 'console');
    const CACHED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
    const NOT_CACHED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
    // Behaviours match in order: each program's versioned path (cached: its bytes never change) before the rest of
    // its folder (never cached: the current build, checksum, manifest and install script change with each build).
    expect(consolePaths.map((b) => [b.PathPattern, b.AllowedMethods, b.CachePolicyId])).toEqual([
      ['/index.html', ['GET', 'HEAD'], NOT_CACHED],
      ['/favicon.*', ['GET', 'HEAD'], NOT_CACHED],
      ['/assets/*', ['GET', 'HEAD'], CACHED],
      ['/agent/v*', ['GET', 'HEAD'], CACHED],
      ['/agent/*', ['GET', 'HEAD'], NOT_CACHED],
      ['/cli/v*', ['GET', 'HEAD'], CACHED],
      ['/cli/*', ['GET', 'HEAD'], NOT_CACHED],
    ]);
    expect(config.DefaultCacheBehavior.TargetOriginId).toBe('api');
    // Kept on `serverless remove`, which would otherwise fail on a bucket that holds files.
    expect(resources['ConsoleBucket']).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    expect(resources['ConsoleBucket']?.Properties?.['PublicAccessBlockConfiguration']).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    const statements = (
      resources['ConsoleBucketPolicy']?.Properties?.['PolicyDocument'] as {
        Statement: { Principal: unknown; Action: string; Condition: unknown }[];
      }
    ).Statement;
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({ Principal: { Service: 'cloudfront.amazonaws.com' }, Action: 's3:GetObject' });
    expect(JSON.stringify(statements[0]?.Condition)).toContain('distribution/');
    // The local front's policy, but for the viewer channel's origin (issue 36): the WebSocket API's host, the third
    // part of AGENT_SOCKET_URL (`wss://<api>.execute-api.<region>.amazonaws.com/<stage>`) split at '/'.
    const csp = (
      resources['ConsoleHeaders']?.Properties as {
        ResponseHeadersPolicyConfig: { SecurityHeadersConfig: { ContentSecurityPolicy: Record<string, unknown> } };
      }
    ).ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy['ContentSecurityPolicy'] as {
      'Fn::Join': [string, unknown[]];
    };
    const [separator, parts] = csp['Fn::Join'];
    const socketHost = { 'Fn::Select': [2, { 'Fn::Split': ['/', expect.anything()] }] };
    expect(parts.filter((p) => typeof p !== 'string')).toEqual([socketHost]);
    expect(JSON.stringify(parts)).toContain('{"Ref":"WebsocketsApi"},".execute-api."');
    expect(parts.map((p) => (typeof p === 'string' ? p : '<socket host>')).join(separator)).toBe(
      CONSOLE_HEADERS['content-security-policy'].replace(
        "connect-src 'self'",
        "connect-src 'self' wss://<socket host>",
      ),
    );
  });

  it('answers every console and program file with the Cache-Control the local front sends: immutable only when named by its contents', async () => {
    const config = (template.Resources['Edge']?.Properties as { DistributionConfig: DistributionConfig })
      .DistributionConfig;
    const cacheControlOf = (policy: unknown): string | undefined => {
      const name = (policy as { Ref?: string } | undefined)?.Ref ?? '';
      const items = (
        template.Resources[name]?.Properties as
          | { ResponseHeadersPolicyConfig: { CustomHeadersConfig?: { Items: { Header: string; Value: string }[] } } }
          | undefined
      )?.ResponseHeadersPolicyConfig.CustomHeadersConfig?.Items;
      return items?.find((h) => h.Header.toLowerCase() === 'cache-control')?.Value;
    };
    const [console_, programs] = await Promise.all([buildConsole(), buildPrograms()]);
    const files = new Map([...console_, ...programs.files]);
    // Both programs are built, and each one's versioned path is named by its contents (a rebuild of the same version
    // is a new path, so a year-long cache can never hand out other bytes under it).
    expect(Object.keys(programs.releases).sort()).toEqual(['agent', 'cli']);
    for (const release of Object.values(programs.releases)) {
      expect(release.path).toBe(`/${release.name}/v${release.version}/${release.sha256.slice(0, 16)}/${release.file}`);
      expect(files.get(release.path)?.cacheControl).toBe('public, max-age=31536000, immutable');
    }
    const seen = new Set<string>();
    for (const [path, file] of files) {
      // `/` is the distribution's default root object, `/index.html`.
      const served = path === '/' ? `/${config.DefaultRootObject}` : path;
      const behaviour = config.CacheBehaviors.find((b) => globMatches(b.PathPattern, served));
      expect(behaviour?.TargetOriginId, `${path} is not served from the bucket`).toBe('console');
      const local = file.cacheControl ?? 'no-cache'; // local/console-assets.ts's rule for a file without its own
      expect(cacheControlOf(behaviour?.ResponseHeadersPolicyId), path).toBe(local);
      // Cached at the edge only when immutable: everything else is fetched from the bucket each time.
      expect(behaviour?.CachePolicyId === CACHING_OPTIMIZED, path).toBe(local.includes('immutable'));
      seen.add(local);
    }
    // The content-named assets (the script, the style sheet, the page chunks) and the page are both among them.
    expect([...seen].sort()).toEqual(['no-cache', 'public, max-age=31536000, immutable']);
    expect([...files.keys()].filter((p) => /^\/assets\/console-[A-Z0-9]+\.(js|css)$/.test(p))).toHaveLength(2);
  });

  it('generates the origin secret and the first admin’s password at deploy time, and names no value anywhere', async () => {
    const secrets = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret');
    expect(secrets.map(([id, r]) => [id, r.Properties['Name']]).sort()).toEqual([
      ['BootstrapAdminPassword', 'deployer/ci/bootstrap-admin-password'],
      ['EdgeOriginSecret', 'deployer/ci/edge-origin-secret'],
    ]);
    for (const [id, secret] of secrets) {
      // Generated by Secrets Manager: no SecretString in the template.
      expect(secret.Properties['SecretString'], id).toBeUndefined();
      expect(secret.Properties['GenerateSecretString'], id).toMatchObject({ ExcludePunctuation: true });
    }
    // CloudFront's origin header is a dynamic reference CloudFormation resolves, never a value.
    const edge = template.Resources['Edge']?.Properties as {
      DistributionConfig: {
        Origins: { Id: string; OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[] }[];
      };
    };
    const api = edge.DistributionConfig.Origins.find((o) => o.Id === 'api');
    expect(api?.OriginCustomHeaders).toEqual([
      {
        HeaderName: 'x-deployer-edge',
        HeaderValue: {
          'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: 'EdgeOriginSecret' }, ':SecretString}}']],
        },
      },
    ]);
    // Neither the old default nor a value given in the environment reaches the template, and no output names a secret.
    const text = await readFile(join(out, 'cloudformation-template-update-stack.json'), 'utf8');
    expect(text).not.toContain(PLAIN_EDGE_SECRET);
    expect(text).not.toMatch(/"HeaderValue":\s*"unset"/);
    const outputs = JSON.stringify((template as { Outputs?: unknown }).Outputs ?? {});
    for (const [id] of secrets) expect(outputs, `an output names ${id}`).not.toContain(id);
  });

  it('serves the custom domain when one is given, and writes the public URL where every function reads it', () => {
    const resources = template.Resources;
    const config = (resources['Edge']?.Properties as { DistributionConfig: Record<string, unknown> })
      .DistributionConfig;
    const conditions = (template as { Conditions?: Record<string, unknown> }).Conditions;
    expect(conditions?.['HasCustomDomain']).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [CUSTOM_DOMAIN, ''] }] });
    expect(config['Aliases']).toEqual({ 'Fn::If': ['HasCustomDomain', [CUSTOM_DOMAIN], { Ref: 'AWS::NoValue' }] });
    expect(config['ViewerCertificate']).toEqual({
      'Fn::If': [
        'HasCustomDomain',
        { AcmCertificateArn: CERTIFICATE_ARN, SslSupportMethod: 'sni-only', MinimumProtocolVersion: 'TLSv1.2_2021' },
        { Ref: 'AWS::NoValue' },
      ],
    });
    // With the domain: https://<domain> from the first deploy; without: the distribution's own name, same deploy.
    const fromEdge = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': ['Edge', 'DomainName'] }]] };
    expect(resources['PublicBaseUrlParameter']).toMatchObject({
      Type: 'AWS::SSM::Parameter',
      Properties: {
        Name: '/deployer/ci/public-base-url',
        Type: 'String',
        Value: { 'Fn::If': ['HasCustomDomain', `https://${CUSTOM_DOMAIN}`, fromEdge] },
      },
    });
    const functions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(10);
    for (const [id, fn] of functions) {
      const variables = (fn.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
      expect(variables['PUBLIC_BASE_URL_PARAMETER'], id).toBe('/deployer/ci/public-base-url');
      // No function names the distribution (the cycle the parameter avoids).
      expect(JSON.stringify(fn.Properties), id).not.toContain('"Edge"');
    }
    // The sweep (the only thing that starts work on its own) is scheduled once the URL exists.
    expect([resources['SweepEventsRuleSchedule1']?.DependsOn].flat()).toContain('PublicBaseUrlParameter');
  });

  it('has no dependency cycle, which CloudFormation would refuse (and the check finds the one an environment URL makes)', () => {
    const graph = dependenciesOf(template.Resources as never);
    expect(cyclesOf(graph)).toEqual([]);
    expect(graph.get('Edge')).toContain('StreamLambdaFunctionUrl');
    // PUBLIC_BASE_URL as `!GetAtt Edge.DomainName` in the streaming function's environment: Edge -> its URL -> it.
    const naive = new Map(graph);
    naive.set('StreamLambdaFunction', new Set([...graph.get('StreamLambdaFunction')!, 'Edge']));
    const cycles = cyclesOf(naive);
    expect(cycles.length).toBeGreaterThan(0);
    for (const cycle of cycles) expect(cycle).toMatch(/Edge -> StreamLambdaFunctionUrl -> StreamLambdaFunction/);
  });

  it('alarms on every dead-letter queue, every function’s errors and throttles, the API’s 5xx rate and the sweep', () => {
    const resources = template.Resources;
    const alarms = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties['AlarmActions'], id).toEqual([{ Ref: 'AlarmTopic' }]);
      expect(alarm.Properties['OKActions'], id).toEqual([{ Ref: 'AlarmTopic' }]);
    }
    expect(resources['AlarmTopic']?.Type).toBe('AWS::SNS::Topic');
    expect(resources['AlarmEmailSubscription']).toMatchObject({
      Condition: 'HasAlarmEmail',
      Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: ALARM_EMAIL },
    });
    const on = (metric: string, dimension: unknown) =>
      alarms
        .filter(([, a]) => a.Properties['MetricName'] === metric)
        .filter(([, a]) => JSON.stringify(a.Properties['Dimensions']).includes(JSON.stringify(dimension)))
        .map(([id]) => id);
    // Every queue's dead-letter queue (its RedrivePolicy target), any message visible.
    const deadLetterQueues = Object.values(resources)
      .map((r) => r.Properties?.['RedrivePolicy'] as { deadLetterTargetArn?: { 'Fn::GetAtt': string[] } } | undefined)
      .flatMap((policy) => policy?.deadLetterTargetArn?.['Fn::GetAtt']?.[0] ?? []);
    expect(deadLetterQueues.length).toBeGreaterThanOrEqual(3);
    for (const queue of deadLetterQueues) {
      const [id] = on('ApproximateNumberOfMessagesVisible', { 'Fn::GetAtt': [queue, 'QueueName'] });
      expect(id, `no alarm on ${queue}`).toBeDefined();
      expect(resources[id!]?.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    }
    for (const fn of definition.functions) {
      const ref = { Ref: `${logicalPrefix(fn.name)}LambdaFunction` };
      expect(on('Errors', ref).length, `${fn.name} errors`).toBeGreaterThan(0);
      expect(on('Throttles', ref).length, `${fn.name} throttles`).toBeGreaterThan(0);
    }
    // The sweep failing for three minutes running (the safety net is down), besides its errors alarm.
    expect(resources['SweepFailingAlarm']?.Properties).toMatchObject({ EvaluationPeriods: 3, DatapointsToAlarm: 3 });
    // The API's 5xx rate: a metric-math alarm on the HTTP API's 5xx and Count.
    const rate = JSON.stringify(resources['ApiServerErrorRateAlarm']?.Properties['Metrics']);
    for (const part of ['"5xx"', '"Count"', '{"Ref":"HttpApi"}', '100 * errors / requests'])
      expect(rate).toContain(part);
  });

  it('has one dashboard (API, queues, functions, business metrics) and traces every function when asked', () => {
    const body = JSON.stringify(template.Resources['Dashboard']?.Properties['DashboardBody']);
    for (const part of [
      '${HttpApi}',
      'Latency',
      '5xx',
      '${DispatchDeadLetterQueue.QueueName}',
      '${DispatchQueue.QueueName}',
    ])
      expect(body).toContain(part);
    for (const fn of definition.functions) expect(body).toContain(`deployer-ci-${fn.name}`);
    for (const metric of [
      'DeploymentsStarted',
      'DeploymentsSucceeded',
      'DeploymentsFailed',
      'DispatchLatency',
      'AgentsConnected',
    ])
      expect(body).toContain(metric);
    // Packaged with --param=tracing=true.
    for (const fn of definition.functions)
      expect(
        template.Resources[`${logicalPrefix(fn.name)}LambdaFunction`]?.Properties['TracingConfig'],
        fn.name,
      ).toEqual({
        Mode: 'Active',
      });
  });

  it("follows the resource types' published schemas: types, properties, required ones, Refs and attributes", () => {
    // tests/integration/service/template-schema.ts, on AWS's own database of the CloudFormation registry schemas.
    expect(templateSchemaProblems(template as Template)).toEqual([]);
  });

  it('stays well inside the 500-resource limit when every area exists', () => {
    const resources = Object.values(template.Resources);
    const ofType = (type: string) => resources.filter((r) => r.Type === type).length;
    // Each function brings a function, a version, a log group and two alarms (errors, throttles); each HTTP
    // function an integration and a permission; each httpApi event one route. What is left is fixed (table,
    // queues, API, CloudFront, the other alarms, ...).
    const perFunction = 5;
    const perHttpFunction = perFunction + 2;
    const functions = ofType('AWS::Lambda::Function');
    const integrations = ofType('AWS::ApiGatewayV2::Integration');
    const fixed = resources.length - functions * perFunction - integrations * 2 - ofType('AWS::ApiGatewayV2::Route');
    // The whole API (~120 endpoints) in 15 areas of 3 routes each, plus 8 queue consumers (+ an event mapping):
    const projected = fixed + 15 * (perHttpFunction + 3) + 8 * (perFunction + 1) + 10;
    // One function per endpoint instead would need 120 * (perHttpFunction + 1) resources for the routes alone.
    expect(120 * (perHttpFunction + 1)).toBeGreaterThan(500);
    expect(projected).toBeLessThan(300);
  });

  describe('least privilege', () => {
    const roleOf = (functionName: string): string => {
      const fn = template.Resources[`${logicalPrefix(functionName)}LambdaFunction`];
      if (fn === undefined) throw new Error(`no Lambda function for ${functionName}`);
      return resourceName(fn.Properties['Role']);
    };
    const statementsOf = (roleId: string): Statement[] => {
      const role = template.Resources[roleId];
      expect(role?.Type, roleId).toBe('AWS::IAM::Role');
      expect(role?.Properties['ManagedPolicyArns'], `${roleId} has managed policies`).toBeUndefined();
      const policies = (role?.Properties['Policies'] ?? []) as { PolicyDocument: { Statement: unknown[] } }[];
      // A statement under a condition (`Fn::If`, the tracing grant) counts as the packaged parameters decide.
      return policies
        .flatMap((policy) => policy.PolicyDocument.Statement)
        .flatMap((st) => {
          const choice = (st as { 'Fn::If'?: [string, unknown, unknown] })['Fn::If'];
          const chosen = choice === undefined ? st : conditionHolds(choice[0]) ? choice[1] : choice[2];
          return JSON.stringify(chosen) === JSON.stringify({ Ref: 'AWS::NoValue' }) ? [] : [chosen as Statement];
        });
    };
    const grantsOf = (roleId: string): string[] =>
      [
        ...new Set(
          statementsOf(roleId).flatMap((st) =>
            asList(st.Action).flatMap((action) => asList(st.Resource).map((r) => `${action} ${resourceName(r)}`)),
          ),
        ),
      ].sort();
    const environmentOf = (functionName: string): Record<string, unknown> =>
      ((
        template.Resources[`${logicalPrefix(functionName)}LambdaFunction`]?.Properties['Environment'] as
          { Variables?: Record<string, unknown> } | undefined
      )?.Variables ?? {}) as Record<string, unknown>;
    const secretParametersOf = (functionName: string): string[] =>
      Object.entries(environmentOf(functionName))
        .filter(([name]) => name.endsWith('_PARAMETER'))
        .map(([, value]) => String(value));
    /** Whether a condition of the packaged template holds (Fn::Equals of literals, Fn::Not). */
    const conditionHolds = (name: string): boolean => {
      const evaluate = (c: unknown): boolean => {
        const v = c as Record<string, unknown[]>;
        if (v['Fn::Not'] !== undefined) return !evaluate(v['Fn::Not'][0]);
        if (v['Fn::Equals'] !== undefined) return v['Fn::Equals'][0] === v['Fn::Equals'][1];
        throw new Error(`condition ${name}: ${JSON.stringify(c)} is not evaluated by this test`);
      };
      return evaluate((template as { Conditions?: Record<string, unknown> }).Conditions?.[name]);
    };
    /** The stack's Secrets Manager secrets: name -> logical id. */
    const generatedSecrets = (): Record<string, string> =>
      Object.fromEntries(
        Object.entries(template.Resources)
          .filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret')
          .map(([id, r]) => [String(r.Properties['Name']), id]),
      );
    const consumedQueuesOf = (functionName: string): string[] =>
      Object.values(template.Resources)
        .filter(
          (r) =>
            r.Type === 'AWS::Lambda::EventSourceMapping' &&
            resourceName(r.Properties['FunctionName']) === `${logicalPrefix(functionName)}LambdaFunction`,
        )
        .map((r) => resourceName(r.Properties['EventSourceArn']));
    /** The queues a function's stream mappings record failed batches on (DestinationConfig.OnFailure). */
    const failureQueuesOf = (functionName: string): string[] =>
      Object.values(template.Resources)
        .filter(
          (r) =>
            r.Type === 'AWS::Lambda::EventSourceMapping' &&
            resourceName(r.Properties['FunctionName']) === `${logicalPrefix(functionName)}LambdaFunction`,
        )
        .flatMap((r) => {
          const destination = (
            r.Properties['DestinationConfig'] as { OnFailure?: { Destination?: unknown } } | undefined
          )?.OnFailure?.Destination;
          return destination === undefined ? [] : [resourceName(destination)];
        });

    let calls: Record<string, FunctionCalls>;
    beforeAll(async () => {
      calls = {};
      // One at a time: esbuild already uses every core.
      for (const fn of definition.functions) calls[fn.name] = await awsCallsOf(ROOT, fn.module);
    }, 120_000);

    it('gives every function a role of its own, and the stack no other role or policy', () => {
      const roles = definition.functions.map((fn) => roleOf(fn.name));
      expect(new Set(roles).size).toBe(definition.functions.length);
      const iam = Object.entries(template.Resources).filter(([, r]) => r.Type.startsWith('AWS::IAM::'));
      expect(iam.map(([id, r]) => `${r.Type} ${id}`).sort()).toEqual(roles.map((id) => `AWS::IAM::Role ${id}`).sort());
      for (const id of roles) {
        const trust = (
          template.Resources[id]?.Properties['AssumeRolePolicyDocument'] as {
            Statement: { Principal: unknown; Action: unknown }[];
          }
        ).Statement;
        expect(trust).toEqual([
          { Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: 'sts:AssumeRole' },
        ]);
      }
    });

    it('grants no wildcard action or resource, and only Allow statements with an Action and a Resource', () => {
      for (const fn of definition.functions) {
        for (const st of statementsOf(roleOf(fn.name))) {
          expect(Object.keys(st).sort(), `${fn.name} ${st.Sid}`).toEqual(
            expect.arrayContaining(['Action', 'Effect', 'Resource']),
          );
          expect(
            Object.keys(st).filter((k) => k.startsWith('Not')),
            `${fn.name} ${st.Sid}`,
          ).toEqual([]);
          expect(st.Effect).toBe('Allow');
          for (const action of asList(st.Action))
            expect(action, `${fn.name} grants ${action}`).toMatch(/^[a-z0-9-]+:[A-Za-z]+$/);
          for (const resource of asList(st.Resource)) {
            const name = resourceName(resource);
            // X-Ray's two calls have no resource types: the one grant on *, and only with tracing on.
            if (st.Sid === 'Tracing') {
              expect([asList(st.Action), name]).toEqual([['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], '*']);
              continue;
            }
            expect(name, `${fn.name} grants ${JSON.stringify(st.Action)} on ${name}`).not.toBe('*');
            if (name.startsWith('SSMParameter:')) {
              // An operator-made parameter of this stage, or the reference path of a secret the stack generates.
              expect(name, `${fn.name}: a secret parameter of this stage`).toMatch(
                /^SSMParameter:(\/aws\/reference\/secretsmanager)?\/deployer\/ci\/[a-z-]+$/,
              );
              continue;
            }
            const base = name.replace(/\/index\/(\*|gsi\d)$|\/stream$/, '');
            expect(base, `${fn.name}: ${name}`).toMatch(/^[A-Za-z0-9]+$/); // a resource of this stack
            expect(template.Resources[base], `${fn.name}: ${name} is not in the stack`).toBeDefined();
          }
        }
      }
    });

    it('grants every function exactly the AWS calls its bundled code makes, on the resources it makes them on', () => {
      for (const fn of definition.functions) {
        const own = calls[fn.name]!;
        const runs = RUNS_ONLY_LIKE[fn.name] === undefined ? own : calls[RUNS_ONLY_LIKE[fn.name]!]!;
        const needed = neededGrants(
          fn.name,
          runs,
          consumedQueuesOf(fn.name),
          secretParametersOf(fn.name),
          generatedSecrets(),
          failureQueuesOf(fn.name),
        );
        // Tracing on (the packaging's --param=tracing=true): the function sends its traces to X-Ray.
        if (conditionHolds('TracingEnabled')) needed.push('xray:PutTelemetryRecords *', 'xray:PutTraceSegments *');
        needed.sort();
        // Both ways: a grant the code does not use fails, and so does a call the role does not allow.
        expect.soft(grantsOf(roleOf(fn.name)), `the role of ${fn.name} (infra/iam.yml)`).toEqual(needed);
      }
      // The shell a spec-only bundle runs is part of that bundle.
      for (const [fn, like] of Object.entries(RUNS_ONLY_LIKE)) {
        const ownActions = new Set(calls[fn]!.calls.map((c) => c.action));
        for (const call of calls[like]!.calls)
          expect(ownActions.has(call.action), `${fn} runs ${call.action} like ${like}`).toBe(true);
      }
    });

    it('never grants BatchWriteItem, TransactGetItems or DescribeTable, which no code calls', () => {
      const granted = definition.functions.flatMap((fn) => grantsOf(roleOf(fn.name)));
      for (const action of ['dynamodb:BatchWriteItem', 'dynamodb:TransactGetItems', 'dynamodb:DescribeTable']) {
        expect(granted.filter((g) => g.startsWith(`${action} `))).toEqual([]);
      }
    });

    it('puts no secret in any function environment: only the names of their SecureString parameters', () => {
      const secretValue = /^[\w-]+:[A-Za-z0-9+/_-]{43}=?(,|$)|^[0-9a-f]{32,}$/; // a key ring entry, a hex token
      for (const fn of definition.functions) {
        const env = environmentOf(fn.name);
        for (const name of SECRET_NAMES)
          expect(env, `${fn.name} has ${name} in its environment`).not.toHaveProperty(name);
        for (const [name, value] of Object.entries(env))
          if (typeof value === 'string') expect(value, `${fn.name} ${name}`).not.toMatch(secretValue);
        // Each parameter read at cold start by the module every entry imports first.
        expect(calls[fn.name]!.modules, fn.name).toContain('infra/secrets.ts');
      }
      // Which function reads which secret: the ones that decrypt, check the origin secret, create the first admin.
      const names = (fn: string) =>
        Object.keys(environmentOf(fn))
          .filter((n) => n.endsWith('_PARAMETER'))
          .sort();
      expect(names('meta')).toEqual(['EDGE_ORIGIN_SECRET_PARAMETER', 'PUBLIC_BASE_URL_PARAMETER']);
      expect(names('admin')).toEqual([
        'EDGE_ORIGIN_SECRET_PARAMETER',
        'ENCRYPTION_KEYS_PARAMETER',
        'PUBLIC_BASE_URL_PARAMETER',
      ]);
      expect(names('auth')).toEqual([
        'BOOTSTRAP_ADMIN_PASSWORD_PARAMETER',
        'EDGE_ORIGIN_SECRET_PARAMETER',
        'ENCRYPTION_KEYS_PARAMETER',
        'PUBLIC_BASE_URL_PARAMETER',
      ]);
      expect(names('orchestrator')).toEqual(['ENCRYPTION_KEYS_PARAMETER', 'PUBLIC_BASE_URL_PARAMETER']);
      expect(environmentOf('auth')['ENCRYPTION_KEYS_PARAMETER']).toBe('/deployer/ci/encryption-keys');
      // A function that decrypts has the key ring's parameter; one that does not, does not.
      for (const fn of definition.functions)
        expect(names(fn.name).includes('ENCRYPTION_KEYS_PARAMETER'), fn.name).toBe(
          calls[RUNS_ONLY_LIKE[fn.name] ?? fn.name]!.modules.includes('infra/crypto/secret-cipher.ts'),
        );
    });

    it('grants Scan on the encryption index only to admin and rotateKeys, and on the table only to rotateKeys', () => {
      const scans = definition.functions.flatMap((fn) =>
        grantsOf(roleOf(fn.name))
          .filter((g) => g.startsWith('dynamodb:Scan '))
          .map((g) => `${fn.name} ${g}`),
      );
      expect(scans.sort()).toEqual([
        `admin dynamodb:Scan MainTable/index/${ENCRYPTION_INDEX}`,
        'rotateKeys dynamodb:Scan MainTable',
        `rotateKeys dynamodb:Scan MainTable/index/${ENCRYPTION_INDEX}`,
      ]);
    });

    it('lets health, docs and not-found write only rate-limit buckets, and health read only the probe item', () => {
      const rateLimitPrefix = keys.rateLimit('x').pk.replace(/x$/, '');
      expect(rateLimitPrefix).toBe('RATE#');
      for (const fn of ['meta', 'docs', 'notFound']) {
        const runs = calls[RUNS_ONLY_LIKE[fn] ?? fn]!;
        // What the conditions below rely on: the only table calls these functions make are the rate limiter's
        // UpdateItem and, for health, the readiness probe's GetItem.
        const tableCalls = runs.calls.filter((c) => c.action.startsWith('dynamodb:'));
        expect([...new Set(tableCalls.map((c) => `${c.action} ${c.module}`))].sort(), fn).toEqual(
          fn === 'meta'
            ? ['dynamodb:GetItem infra/health-probes.ts', 'dynamodb:UpdateItem infra/dynamodb/rate-limiter.ts']
            : ['dynamodb:UpdateItem infra/dynamodb/rate-limiter.ts'],
        );
        for (const st of statementsOf(roleOf(fn)).filter((s) =>
          asList(s.Action).some((a) => a.startsWith('dynamodb:')),
        )) {
          const actions = asList(st.Action);
          if (actions.includes('dynamodb:UpdateItem')) {
            expect(actions, fn).toEqual(['dynamodb:UpdateItem']);
            expect(st.Condition, fn).toEqual({
              'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${rateLimitPrefix}*`] },
            });
          } else {
            expect(fn).toBe('meta');
            expect(actions).toEqual(['dynamodb:GetItem']);
            expect(st.Condition).toEqual({
              'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [keys.probe().pk] },
            });
          }
        }
      }
    });

    it('sends to each queue through the adapter QUEUE_OF_MODULE names, by the queue URL variable of that queue', async () => {
      const environment = definition.environment;
      expect(environment['DISPATCH_QUEUE_URL']).toEqual({ Ref: 'DispatchQueue' });
      expect(environment['ORCHESTRATOR_QUEUE_URL']).toEqual({ Ref: 'OrchestratorQueue' });
      expect(environment['ANALYSIS_QUEUE_URL']).toEqual({ Ref: 'AnalysisQueue' });
      const variableOf: Record<string, string> = {
        DispatchQueue: 'DISPATCH_QUEUE_URL',
        OrchestratorQueue: 'ORCHESTRATOR_QUEUE_URL',
        AnalysisQueue: 'ANALYSIS_QUEUE_URL',
        WebhookQueue: 'WEBHOOK_QUEUE_URL',
      };
      const constructors: Record<string, RegExp> = {
        'infra/sqs/dispatch-queue.ts': /new SqsDispatchQueue\([^;\n]*/g,
        'infra/sqs/engine-queue.ts': /new SqsEngineQueue\([^;\n]*/g,
        'infra/sqs/analysis-queue.ts': /new SqsAnalysisQueue\([^;\n]*/g,
        'infra/sqs/webhook-queue.ts': /new SqsWebhookQueue\([^;\n]*/g,
        'infra/health-probes.ts': /sqsProbe\([^;\n]*/g,
      };
      const sources = await Promise.all(
        (await readdir(join(ROOT, 'functions', 'shared')))
          .filter((f) => f.endsWith('.ts'))
          .map((f) => readFile(join(ROOT, 'functions', 'shared', f), 'utf8')),
      );
      for (const [module, queue] of Object.entries(QUEUE_OF_MODULE)) {
        const uses = sources.flatMap((source) => source.match(constructors[module]!) ?? []);
        expect(uses.length, `${module} is constructed in functions/shared`).toBeGreaterThan(0);
        for (const use of uses) expect(use, module).toContain(variableOf[queue]);
      }
    });
  });

  describe('queues', () => {
    /** The queue consumers (a table stream's consumer is not one). */
    const consumers = () =>
      Object.values(template.Resources)
        .filter(
          (r) =>
            r.Type === 'AWS::Lambda::EventSourceMapping' &&
            !resourceName(r.Properties['EventSourceArn']).endsWith('/stream'),
        )
        .map((mapping) => ({
          mapping,
          fn: template.Resources[resourceName(mapping.Properties['FunctionName'])]!,
          queue: template.Resources[resourceName(mapping.Properties['EventSourceArn'])]!,
        }));

    it('keeps every consumer queue invisible for at least six times its consumer’s timeout (AWS’s advice)', () => {
      expect(consumers()).toHaveLength(4); // dispatcher, orchestrator, analyzer, webhooks
      for (const { fn, queue } of consumers()) {
        const timeout = Number(fn.Properties['Timeout']);
        expect(timeout).toBeGreaterThan(0);
        expect(
          Number(queue.Properties['VisibilityTimeout']),
          String(queue.Properties['QueueName']),
        ).toBeGreaterThanOrEqual(6 * timeout);
      }
    });

    it('limits the dispatcher with the event source’s maximumConcurrency, not with reserved concurrency', () => {
      const dispatcher = consumers().find(({ queue }) => queue === template.Resources['DispatchQueue']);
      expect(dispatcher?.mapping.Properties['ScalingConfig']).toEqual({ MaximumConcurrency: 2 });
      expect(dispatcher?.fn.Properties['ReservedConcurrentExecutions']).toBeUndefined();
      expect(template.Resources['DispatchQueue']?.Properties['RedrivePolicy']).toMatchObject({ maxReceiveCount: 5 });
    });

    it('reserves no concurrency anywhere (a new account’s quota of 10 fails any reservation)', () => {
      const reserved = Object.entries(template.Resources)
        .filter(
          ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties['ReservedConcurrentExecutions'] !== undefined,
        )
        .map(([id]) => id);
      expect(reserved).toEqual([]);
    });

    it('keeps the table when the stack goes: retain policies, deletion protection, point-in-time recovery', () => {
      const tables = Object.values(template.Resources).filter((r) => r.Type === 'AWS::DynamoDB::Table');
      expect(tables.length).toBeGreaterThan(0);
      for (const table of tables) {
        const resource = table as unknown as { DeletionPolicy?: string; UpdateReplacePolicy?: string };
        expect([resource.DeletionPolicy, resource.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
        expect(table.Properties['DeletionProtectionEnabled']).toBe(true);
        expect(table.Properties['PointInTimeRecoverySpecification']).toEqual({ PointInTimeRecoveryEnabled: true });
      }
    });

    it('drops sweep runs that waited past two minutes instead of retrying them', () => {
      const invokeConfig = Object.values(template.Resources).find(
        (r) =>
          r.Type === 'AWS::Lambda::EventInvokeConfig' &&
          JSON.stringify(r.Properties['FunctionName']) === JSON.stringify({ Ref: 'SweepLambdaFunction' }),
      );
      expect(invokeConfig?.Properties).toMatchObject({ MaximumEventAgeInSeconds: 120, MaximumRetryAttempts: 0 });
    });

    it('keeps the local queues at 60 s, so a failed message comes back locally as soon as before', () => {
      const local = localQueues(definition.queues);
      expect(local.map((q) => q.logicalId)).toEqual(definition.queues.map((q) => q.logicalId));
      for (const queue of local) {
        const cloud = definition.queues.find((q) => q.logicalId === queue.logicalId)!;
        expect(queue.attributes['VisibilityTimeout']).toBe(
          cloud.attributes['VisibilityTimeout'] === undefined ? undefined : String(LOCAL_VISIBILITY_TIMEOUT_SECONDS),
        );
        expect(queue.deadLetter).toEqual(cloud.deadLetter);
      }
      expect(definition.queues.find((q) => q.logicalId === 'DispatchQueue')?.attributes['VisibilityTimeout']).toBe(
        '360',
      );
    });
  });

  describe('CORS', () => {
    type Resolve = (input: { resolveVariable: (name: string) => Promise<unknown> }) => Promise<unknown>;
    type Cors = {
      httpApi: Resolve;
      streamUrl: Resolve;
      corsFor: (origins: string[]) => unknown;
      parseOrigins: (value: string | undefined) => string[];
    };
    const cors = createRequire(import.meta.url)('../../../infra/cors.cjs') as Cors;
    const atStage = (stage: string) => ({
      resolveVariable: async (name: string) => (name === 'sls:stage' ? stage : undefined),
    });
    const withOrigins = async <T>(value: string | undefined, run: () => Promise<T>): Promise<T> => {
      const before = process.env['CORS_ORIGINS'];
      if (value === undefined) delete process.env['CORS_ORIGINS'];
      else process.env['CORS_ORIGINS'] = value;
      try {
        return await run();
      } finally {
        if (before === undefined) delete process.env['CORS_ORIGINS'];
        else process.env['CORS_ORIGINS'] = before;
      }
    };

    it('lets API Gateway answer CORS for the CORS_ORIGINS it was packaged with, with credentials', () => {
      expect(template.Resources['HttpApi']?.Properties['CorsConfiguration']).toEqual({
        AllowOrigins: ['https://console.example.com', 'https://admin.example.com'],
        AllowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        AllowHeaders: ['authorization', 'content-type', 'last-event-id'],
        ExposeHeaders: ['x-request-id', 'retry-after', 'x-ratelimit-remaining'],
        AllowCredentials: true,
        MaxAge: 600,
      });
    });

    it('gives the event streams’ function URL the same origins and headers, for GET', () => {
      const url = Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Url');
      expect(url?.Properties['Cors']).toEqual({
        AllowOrigins: ['https://console.example.com', 'https://admin.example.com'],
        AllowMethods: ['GET'],
        AllowHeaders: ['authorization', 'content-type', 'last-event-id'],
        ExposeHeaders: ['x-request-id', 'retry-after', 'x-ratelimit-remaining'],
        AllowCredentials: true,
        MaxAge: 600,
      });
    });

    it('configures no CORS in the cloud without CORS_ORIGINS, and none for the local stage (the application does it there)', async () => {
      for (const resolve of [cors.httpApi, cors.streamUrl]) {
        expect(await withOrigins(undefined, () => resolve(atStage('prod')))).toBe(false);
        expect(await withOrigins(' , ', () => resolve(atStage('prod')))).toBe(false);
        expect(await withOrigins('https://console.example.com', () => resolve(atStage('local')))).toBe(false);
        expect(await withOrigins('https://console.example.com', () => resolve(atStage('prod')))).toMatchObject({
          allowedOrigins: ['https://console.example.com'],
          allowCredentials: true,
        });
      }
    });

    it('refuses a wildcard or anything but an exact origin (API Gateway sends credentials only to named origins)', () => {
      for (const bad of [
        '*',
        'https://*.example.com',
        'console.example.com',
        'https://console.example.com/',
        'https://console.example.com/app',
      ]) {
        expect(() => cors.corsFor(cors.parseOrigins(bad)), bad).toThrow(/CORS_ORIGINS/);
      }
      expect(cors.parseOrigins('http://localhost:3000, http://127.0.0.1:5173')).toEqual([
        'http://localhost:3000',
        'http://127.0.0.1:5173',
      ]);
    });
  });
});
