// `serverless deploy` refuses a stage whose data key ring does not exist (infra/deploy-checks.cjs), before it
// packages or calls anything else: run for real, against a stand-in for SSM (AWS_ENDPOINT_URL) that knows no
// parameter and records every call made to it.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../local/service-definition.js';

let server: Server;
let endpoint: string;
const calls: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      // JSON protocols name the call in a header, query protocols (STS, CloudFormation) in the body's Action.
      calls.push(String(req.headers['x-amz-target'] ?? new URLSearchParams(body).get('Action') ?? req.url));
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ __type: 'ParameterNotFound', message: '' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('serverless deploy', () => {
  it('refuses a stage without its key ring, naming it, before packaging or any call that changes something', async () => {
    const run = promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'), 'deploy', '--stage', 'refusal'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          AWS_ENDPOINT_URL: endpoint,
          AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
          AWS_SECRET_ACCESS_KEY: 'example',
          AWS_REGION: 'us-east-1',
          SLS_TELEMETRY_DISABLED: '1',
          ESBUILD_WORK_FOLDER: join('.build', `deploy-refusal-${process.pid}`),
        },
      },
    );
    const failure = (await run.then(
      () => undefined,
      (error: unknown) => error,
    )) as { code?: number; stdout: string; stderr: string } | undefined;
    expect(failure, 'the deploy went on').toBeDefined();
    expect(failure!.code).not.toBe(0);
    expect(`${failure!.stdout}${failure!.stderr}`).toContain(
      'The data key ring /deployer/refusal/encryption-keys does not exist',
    );
    expect(calls.length).toBeGreaterThan(0);
    // The key ring first; nothing else but the framework's read of who the caller is (on its way out): no
    // CloudFormation, S3 or Lambda call, and no packaging before the refusal.
    expect(calls[0]).toBe('AmazonSSM.GetParameter');
    expect(calls.filter((call) => call !== 'AmazonSSM.GetParameter' && call !== 'GetCallerIdentity')).toEqual([]);
  }, 120_000);
});
