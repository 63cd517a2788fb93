// Benchmarks: figures printed, nothing asserted. `npm run bench [-- --quick] [--save] [--only a,b] [--skip a,b]`
// runs them all, one after the other, and ends with one table of their key figures against the figures before
// issue 13 (tests/bench/baseline.json) and, once saved with --save, the last run (tests/bench/last-run.json).
// Its own sections:
//  http     Warm-request latency of GET /api/v1/health (and /server/info, no I/O) through the local stack.
//  shell    The shared HTTP shell against a bare middy handler, in process: what the shell itself costs.
//  bundles  Each function's cloud bundle (esbuild with serverless.yml's options for a cloud stage: the AWS SDK
//           bundled, minified): size, gzip size, module initialisation in 5 cold processes.
//  zips     What ships: `serverless package` (stage ci, into a temporary folder), then each function's zip unzipped
//           alone into an empty folder and its handler imported on this Node with only its environment
//           (tests/integration/service/zip-imports.ts): the init time of each, or the module that did not resolve.
// Then each benchmark script as a child process (`npx tsx tests/bench/<file>`), its output streamed through and its
// RESULT lines (tests/bench/results.ts) collected: output, dashboard, aws-ops, fanout, and overload when its file
// exists. --quick scales the slow ones down (fan-out to 20 agents, 15 idle seconds for aws-ops, 2,000 deployments
// for the dashboard): their figures then carry other names and are not compared with the saved ones.
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import middy from '@middy/core';
import { http } from '../../functions/shared/http.js';
import { logger } from '../../functions/shared/logger.js';
import { startStack } from '../../local/stack.js';
import { ROOT } from '../../local/service-definition.js';
import { httpEvent, lambdaContext } from '../fakes/lambda.js';
import { bound } from '../fakes/shell.js';
import { importPackagedZips } from '../integration/service/zip-imports.js';
import { measureBundles } from './bundles.js';
import { formatTable, parseResultLine, printResults, type Figure } from './results.js';
import { percentile } from './stats.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';

const summary = (samples: number[], unit = 'ms', digits = 2) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(digits)} ${unit}`;
  return `p50 ${f(percentile(sorted, 50))}  p95 ${f(percentile(sorted, 95))}  p99 ${f(percentile(sorted, 99))}  max ${f(sorted.at(-1) ?? NaN)}  (n=${sorted.length})`;
};

const stats = (samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};

const httpLatency = async (): Promise<Figure[]> => {
  const figures: Figure[] = [];
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
      const { p50, p99 } = stats(samples);
      figures.push({ bench: 'http', name: `GET ${path.replace('/api/v1', '')} p50`, value: p50, unit: 'ms', goal: '' });
      figures.push({ bench: 'http', name: `GET ${path.replace('/api/v1', '')} p99`, value: p99, unit: 'ms', goal: '' });
    }
  } finally {
    await stack.stop();
  }
  return figures;
};

const shellOverhead = async (): Promise<Figure[]> => {
  const figures: Figure[] = [];
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
    figures.push({ bench: 'shell', name: `${name} p50`, value: stats(samples).p50 / 1000, unit: 'ms', goal: '' });
  }
  return figures;
};

/** The goal of issue 13 for each function's module initialisation in a cold process. */
const INIT_GOAL_MS = 100;

const bundles = async (): Promise<Figure[]> => {
  console.log(
    `\n3. Cloud bundles (serverless.yml's esbuild options for stage ci: the AWS SDK bundled, minified) and module\n` +
      `   initialisation in 5 fresh node processes each, with the functions' NODE_OPTIONS (machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)})`,
  );
  console.log(
    `   ${'function'.padEnd(13)} ${'size'.padStart(8)} ${'gzip'.padStart(8)} ${'init median'.padStart(12)} ${'min'.padStart(7)} ${'max'.padStart(7)} ${'CPU median'.padStart(11)}`,
  );
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  const measured = await measureBundles(join(ROOT, 'node_modules', '.cache', 'deployer', 'bench'), 5, (b) => {
    const median = b.initMs[Math.floor(b.initMs.length / 2)]!;
    console.log(
      `   ${b.name.padEnd(13)} ${kib(b.bytes).padStart(8)} ${kib(b.gzipBytes).padStart(8)} ${`${median.toFixed(1)} ms`.padStart(12)} ${b.initMs[0]!.toFixed(1).padStart(7)} ${b.initMs.at(-1)!.toFixed(1).padStart(7)} ${`${b.cpuMs[Math.floor(b.cpuMs.length / 2)]!.toFixed(1)} ms`.padStart(11)}${median > INIT_GOAL_MS ? `   << over ${INIT_GOAL_MS} ms` : ''}`,
    );
    console.log(
      `   ${''.padEnd(13)} largest parts: ${b.largest.map((p) => `${p.part} ${(p.bytes / 1024).toFixed(0)}`).join(', ')} (KiB)`,
    );
  });
  console.log(
    '   (sizes exclude the native Argon2 binary, about 650 KiB shipped beside the bundles that hash passwords; init includes loading it)',
  );
  const medians = measured.map((b) => ({ name: b.name, ms: b.initMs[Math.floor(b.initMs.length / 2)]! }));
  const slowest = medians.reduce((a, b) => (b.ms > a.ms ? b : a));
  const cpuMedians = measured.map((b) => b.cpuMs[Math.floor(b.cpuMs.length / 2)]!);
  const goal = `≤ ${INIT_GOAL_MS} ms`;
  return [
    { bench: 'bundles', name: 'init, slowest function (median)', value: slowest.ms, unit: 'ms', goal },
    // The same imports' CPU time: steadier than wall time on a shared machine, so the better figure to compare runs.
    {
      bench: 'bundles',
      name: 'init CPU, slowest function (median)',
      value: Math.max(...cpuMedians),
      unit: 'ms',
      goal: '',
    },
    ...medians.map((m): Figure => ({
      bench: 'bundles',
      name: `init median, ${m.name}`,
      value: m.ms,
      unit: 'ms',
      goal,
    })),
    {
      bench: 'bundles',
      name: 'bundle size, largest function',
      value: Math.max(...measured.map((b) => b.bytes)) / 1024,
      unit: 'KiB',
      goal: '',
    },
    {
      bench: 'bundles',
      name: 'gzip size, all functions',
      value: measured.reduce((n, b) => n + b.gzipBytes, 0) / 1024,
      unit: 'KiB',
      goal: '',
    },
  ];
};

/** Each packaged zip alone (what ships is what runs): its handler's import time on this Node, nothing beside it. */
const zips = async (): Promise<Figure[]> => {
  console.log('\n4. Each packaged function zip unzipped alone into an empty folder, its handler imported on Node');
  console.log(
    `   ${process.versions.node} with only its environment (serverless package --stage ci first, about a minute)`,
  );
  const out = await mkdtemp(join(tmpdir(), 'deployer-bench-package-'));
  const work = join('.build', `bench-package-${process.pid}`);
  try {
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'), 'package', '--stage', 'ci', '--package', out],
      { cwd: ROOT, env: { ...process.env, ESBUILD_WORK_FOLDER: work, SLS_TELEMETRY_DISABLED: '1' } },
    );
    const results = await importPackagedZips(out, join(ROOT, 'node_modules'));
    const figures: Figure[] = [];
    for (const { name, result } of results) {
      console.log(
        `   ${name.padEnd(13)} ${result.ms === undefined ? `FAILED: ${result.error ?? 'no answer'}` : `${result.ms.toFixed(0).padStart(5)} ms`}`,
      );
      if (result.ms !== undefined)
        figures.push({ bench: 'zips', name: `zip import, ${name}`, value: result.ms, unit: 'ms', goal: '' });
    }
    const failed = results.filter((r) => r.result.ms === undefined);
    if (failed.length > 0) throw new Error(`zips that do not import alone: ${failed.map((r) => r.name).join(', ')}`);
    return figures;
  } finally {
    await rm(out, { recursive: true, force: true });
    await rm(join(ROOT, work), { recursive: true, force: true });
  }
};

// --- the whole run ----------------------------------------------------------------------------------------------

interface Bench {
  /** The name --only and --skip take. */
  readonly key: string;
  readonly run: (quick: boolean) => Promise<Figure[]>;
}

/** A benchmark script run as a child process; overload.ts is run only when it exists. */
interface ChildBench {
  readonly key: string;
  readonly file: string;
  readonly args: (quick: boolean) => string[];
  readonly timeoutMs: number;
  readonly optional?: boolean;
}

const MINUTE = 60_000;
const CHILDREN: readonly ChildBench[] = [
  { key: 'output', file: 'output-latency.ts', args: () => [], timeoutMs: 10 * MINUTE },
  { key: 'dashboard', file: 'dashboard.ts', args: (quick) => (quick ? ['2000'] : []), timeoutMs: 15 * MINUTE },
  { key: 'aws-ops', file: 'aws-ops.ts', args: (quick) => (quick ? ['15'] : []), timeoutMs: 15 * MINUTE },
  { key: 'fanout', file: 'fanout.ts', args: (quick) => (quick ? ['20'] : []), timeoutMs: 25 * MINUTE },
  { key: 'overload', file: 'overload.ts', args: () => [], timeoutMs: 20 * MINUTE, optional: true },
];

/** The child being run, so that Ctrl-C can stop it (and the stack it started) first. */
let running: { pid: number } | undefined;
const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
};

/**
 * Runs a benchmark script in its own process group, its stdout streamed through and its RESULT lines collected.
 * Past its timeout the group is sent SIGTERM (the scripts stop their stacks on it), then SIGKILL.
 */
const runChild = (child: ChildBench, quick: boolean): Promise<Figure[]> =>
  new Promise((resolve, reject) => {
    const args = ['tsx', join('tests', 'bench', child.file), ...child.args(quick)];
    console.log(`\n== ${child.key}: npx ${args.join(' ')}`);
    const proc = spawn('npx', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    running = proc.pid === undefined ? undefined : { pid: proc.pid };
    const figures: Figure[] = [];
    const problems: string[] = [];
    let pending = '';
    const take = (line: string) => {
      try {
        const figure = parseResultLine(line);
        if (figure !== undefined) figures.push(figure);
      } catch (error) {
        problems.push((error as Error).message);
      }
    };
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      process.stdout.write(chunk);
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(take);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      console.log(`\n== ${child.key}: still running after ${child.timeoutMs / MINUTE} min, stopping it`);
      signalGroup(proc.pid!, 'SIGTERM');
      setTimeout(() => signalGroup(proc.pid!, 'SIGKILL'), 20_000).unref();
    }, child.timeoutMs);
    proc.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      running = undefined;
      take(pending);
      if (problems.length > 0) console.log(`== ${child.key}: malformed RESULT lines:\n   ${problems.join('\n   ')}`);
      if (timedOut) reject(new Error(`timed out after ${child.timeoutMs / MINUTE} min`));
      else if (code !== 0) reject(new Error(`exited with ${signal ?? code}`));
      else if (figures.length === 0) reject(new Error('printed no RESULT line'));
      else resolve(figures);
    });
  });

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

const readFigures = async (file: string): Promise<Figure[] | undefined> => {
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  return (JSON.parse(text) as { figures: Figure[] }).figures;
};

const listOption = (argv: readonly string[], name: string): string[] | undefined => {
  const at = argv.indexOf(name);
  if (at === -1) return undefined;
  return (argv[at + 1] ?? '').split(',').filter((s) => s !== '');
};

const main = async () => {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const save = argv.includes('--save');
  const only = listOption(argv, '--only');
  const skip = listOption(argv, '--skip') ?? [];
  const own: Bench[] = [
    { key: 'http', run: httpLatency },
    { key: 'shell', run: shellOverhead },
    { key: 'bundles', run: bundles },
    { key: 'zips', run: zips },
  ];
  const children: Bench[] = [];
  for (const child of CHILDREN) {
    if (child.optional === true && !(await exists(join(ROOT, 'tests', 'bench', child.file)))) continue;
    children.push({ key: child.key, run: (q) => runChild(child, q) });
  }
  const known = [...own, ...children].map((b) => b.key);
  for (const key of [...(only ?? []), ...skip])
    if (!known.includes(key)) throw new Error(`unknown bench ${key}: one of ${known.join(', ')}`);
  const selected = [...own, ...children].filter(
    (b) => (only === undefined || only.includes(b.key)) && !skip.includes(b.key),
  );

  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      if (running !== undefined) signalGroup(running.pid, signal);
      setTimeout(() => process.exit(130), running === undefined ? 0 : 20_000).unref();
    });

  const startedAt = performance.now();
  const figures: Figure[] = [];
  const failed: { bench: string; reason: string }[] = [];
  for (const bench of selected) {
    try {
      const result = await bench.run(quick);
      if (!children.includes(bench)) printResults(result);
      figures.push(...result);
    } catch (error) {
      console.log(`\n== ${bench.key} failed: ${(error as Error).message}`);
      failed.push({ bench: bench.key, reason: `failed: ${(error as Error).message}` });
    }
  }

  const previous = (await readFigures(join(ROOT, 'tests', 'bench', 'baseline.json'))) ?? [];
  const lastRunFile = join(ROOT, 'tests', 'bench', 'last-run.json');
  const lastRun = await readFigures(lastRunFile);
  console.log(
    `\n== All figures (${((performance.now() - startedAt) / MINUTE).toFixed(1)} min; previous: before issue 13, tests/bench/baseline.json${lastRun === undefined ? '' : '; last run: tests/bench/last-run.json'}; ! misses its goal)\n`,
  );
  console.log(formatTable(figures, { previous, ...(lastRun === undefined ? {} : { lastRun }), failed }));
  if (save) {
    await writeFile(
      lastRunFile,
      `${JSON.stringify({ saved_at: new Date().toISOString(), quick, machine: { cores: cpus().length, load: loadavg()[0] }, figures }, null, 2)}\n`,
    );
    console.log(`\n   saved to ${lastRunFile}`);
  }
  process.exit(failed.length === 0 ? 0 : 1);
};

await main();
