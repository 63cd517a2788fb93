// Benchmarks: figures printed, nothing asserted. Run with `npm run bench`.
//  1. Warm-request latency of GET /api/v1/health (and /server/info, no I/O) through the local stack, over HTTP.
//  2. The shared HTTP shell against a bare middy handler, in process: what the shell itself costs per request.
//  3. Each function's bundle (esbuild, the options of serverless.yml) size and module-initialisation time.
import { execFile } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import middy from '@middy/core';
import { build } from 'esbuild';
import { http } from '../../functions/shared/http.js';
import { logger } from '../../functions/shared/logger.js';
import { startStack } from '../../local/stack.js';
import { loadServiceDefinition, ROOT } from '../../local/service-definition.js';
import { httpEvent, lambdaContext } from '../fakes/lambda.js';
import { bound } from '../fakes/shell.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const summary = (samples: number[], unit = 'ms', digits = 2) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(digits)} ${unit}`;
  return `p50 ${f(percentile(sorted, 50))}  p95 ${f(percentile(sorted, 95))}  p99 ${f(percentile(sorted, 99))}  max ${f(sorted.at(-1) ?? NaN)}  (n=${sorted.length})`;
};

const httpLatency = async () => {
  console.log('\n1. Warm HTTP latency through the local stack (front -> serverless-offline -> handler; every request');
  console.log('   also takes a token from the DynamoDB-backed rate limit)');
  const stack = await startStack({ port: 0 });
  try {
    for (const path of ['/api/v1/server/info', '/api/v1/health']) {
      const url = `${stack.baseUrl}${path}`;
      for (let i = 0; i < 50; i += 1) await (await fetch(url)).arrayBuffer(); // warm
      const samples: number[] = [];
      for (let i = 0; i < 500; i += 1) {
        const started = performance.now();
        await (await fetch(url)).arrayBuffer();
        samples.push(performance.now() - started);
      }
      console.log(`   ${path.padEnd(22)} ${summary(samples)}`);
    }
  } finally {
    await stack.stop();
  }
};

const shellOverhead = async () => {
  console.log(
    '\n2. In process: the shared HTTP shell vs a bare middy handler (same health body, no I/O, logs silenced)',
  );
  logger.setLogLevel('SILENT');
  const body = { status: 'ok', checked_at: new Date().toISOString(), dependencies: {} };
  const bare = middy().handler(async () => ({
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }));
  // The shell with a rate gate that answers at once: its own cost, without the limiter's DynamoDB write.
  const ours = bound(
    http({ operationId: 'bench', summary: 'bench', tags: [], permission: 'public', responses: {} }, async () => ({
      statusCode: 200,
      body,
    })),
  );
  const event = httpEvent('GET', '/api/v1/health');
  for (const [name, handler] of [
    ['bare middy', bare],
    ['shell (http())', ours],
  ] as const) {
    for (let i = 0; i < 2_000; i += 1) await handler(event, lambdaContext()); // warm
    const samples: number[] = [];
    for (let i = 0; i < 20_000; i += 1) {
      const context = lambdaContext();
      const started = performance.now();
      await handler(event, context);
      samples.push((performance.now() - started) * 1000);
    }
    console.log(`   ${name.padEnd(16)} ${summary(samples, 'µs', 1)}`);
  }
};

const bundles = async () => {
  console.log('\n3. Bundles (esbuild as serverless.yml configures it) and module initialisation in a fresh node');
  const definition = await loadServiceDefinition();
  const out = join(ROOT, 'node_modules', '.cache', 'deployer', 'bench');
  await mkdir(out, { recursive: true });
  for (const fn of definition.functions) {
    const outfile = join(out, `${fn.name}.mjs`);
    await build({
      entryPoints: [join(ROOT, `${fn.module}.ts`)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      external: ['@aws-sdk/*', '@node-rs/argon2'], // as serverless.yml: the SDK is the runtime's, argon2 ships beside the bundle
      outfile,
      logLevel: 'silent',
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
    });
    const size = (await stat(outfile)).size;
    const times: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      // The Lambda runtime defines awslambda.streamifyResponse before loading a handler; so does this probe.
      const script = `globalThis.awslambda ??= {}; awslambda.streamifyResponse ??= (h) => h;
        const s = performance.now(); await import(${JSON.stringify(outfile)}); console.log(performance.now() - s);`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          ...process.env,
          TABLE_NAME: 't',
          DISPATCH_QUEUE_URL: 'http://127.0.0.1/q',
          ORCHESTRATOR_QUEUE_URL: 'http://127.0.0.1/o',
        },
      });
      times.push(Number(stdout.trim()));
    }
    times.sort((a, b) => a - b);
    console.log(
      `   ${fn.name.padEnd(10)} ${(size / 1024).toFixed(0).padStart(5)} KiB   init median ${times[2]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times[4]!.toFixed(1)})`,
    );
  }
  console.log(
    '   (size excludes the AWS SDK, provided by the runtime, and the native Argon2 binary, about 650 KiB shipped beside the bundles that hash passwords; init time includes loading both)',
  );
};

await httpLatency();
await shellOverhead();
await bundles();
process.exit(0);
