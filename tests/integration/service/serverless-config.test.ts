// serverless.yml against the route tables and the packaged CloudFormation template: every route reaches its
// area's function, the stream paths reach the streaming function, and the stack stays deployable.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes, areas, documentedRoutes } from '../../../functions/http/routes.js';
import { STREAM_PATH_PATTERNS, streamRoutes } from '../../../functions/streams/routes.js';
import { patternMatcher } from '../../../local/front.js';
import { loadServiceDefinition, ROOT, type HttpEventDefinition, type ServiceDefinition } from '../../../local/service-definition.js';

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
    .map((segment) => (segment === '{proxy+}' ? '.+' : /^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
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

  it('routes every endpoint to the function of its area and to no other', () => {
    for (const [area, routes] of Object.entries(areas)) {
      const own = definition.httpEvents.filter((e) => e.functionName === area);
      expect(own.length, `serverless.yml has no httpApi events for area ${area}`).toBeGreaterThan(0);
      for (const { method, path } of routes) {
        expect(own.some((e) => serves(e, method, path)), `${method} ${path} is not served by function ${area}`).toBe(true);
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

describe('serverless package', () => {
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
  let artifacts: string[];
  let out: string;

  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'deployer-package-'));
    await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'), 'package', '--stage', 'ci', '--package', out], {
      cwd: ROOT,
      // Its own build folder: packaging cleans the folder it builds in, and stacks of other tests build too.
      env: { ...process.env, TABLE_NAME: '', DISPATCH_QUEUE_URL: '', ORCHESTRATOR_QUEUE_URL: '', ESBUILD_WORK_FOLDER: join('.build', `package-${process.pid}`), SLS_TELEMETRY_DISABLED: '1' },
    });
    template = JSON.parse(await readFile(join(out, 'cloudformation-template-update-stack.json'), 'utf8'));
    artifacts = await readdir(out);
    await rm(join(ROOT, '.build', `package-${process.pid}`), { recursive: true, force: true });
  }, 120_000);

  it('builds without cloud credentials, one artifact per function', () => {
    expect(artifacts).toEqual(expect.arrayContaining(['meta.zip', 'docs.zip', 'auth.zip', 'admin.zip', 'oauth.zip', 'notFound.zip', 'stream.zip']));
  });

  it('ships the native Argon2 binary for Lambda (linux arm64), not this machine’s', async () => {
    // Zip headers keep file names uncompressed, so the names can be looked for in the bytes.
    const zip = await readFile(join(out, 'auth.zip'));
    expect(zip.includes('argon2.linux-arm64-gnu.node')).toBe(true);
    expect(zip.includes('argon2.linux-x64-gnu.node')).toBe(false);
  });

  it('keeps the streaming function URL in RESPONSE_STREAM mode, reachable only through CloudFront', () => {
    const urls = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Url');
    expect(urls).toHaveLength(1);
    expect(urls[0]?.Properties).toMatchObject({ InvokeMode: 'RESPONSE_STREAM', AuthType: 'AWS_IAM' });
    const edge = template.Resources['Edge']?.Properties as { DistributionConfig: { CacheBehaviors: { PathPattern: string; TargetOriginId: string }[] } };
    expect(edge.DistributionConfig.CacheBehaviors.map((b) => [b.PathPattern, b.TargetOriginId])).toEqual(STREAM_PATH_PATTERNS.map((p) => [p, 'streams']));
  });

  it('stays well inside the 500-resource limit when every area exists', () => {
    const resources = Object.values(template.Resources);
    const ofType = (type: string) => resources.filter((r) => r.Type === type).length;
    // Each function brings a function, a version and a log group; each HTTP function an integration and a
    // permission; each httpApi event one route. What is left is fixed (table, queues, API, CloudFront, ...).
    const perFunction = 3;
    const perHttpFunction = perFunction + 2;
    const functions = ofType('AWS::Lambda::Function');
    const integrations = ofType('AWS::ApiGatewayV2::Integration');
    const fixed = resources.length - functions * perFunction - integrations * 2 - ofType('AWS::ApiGatewayV2::Route');
    // The whole API (~120 endpoints) in 15 areas of 3 routes each, plus 8 queue consumers (+ an event mapping):
    const projected = fixed + 15 * (perHttpFunction + 3) + 8 * (perFunction + 1) + 10;
    // One function per endpoint instead would need 120 * (perHttpFunction + 1) resources for the routes alone.
    expect(120 * (perHttpFunction + 1)).toBeGreaterThan(500);
    expect(projected).toBeLessThan(250);
  });
});
