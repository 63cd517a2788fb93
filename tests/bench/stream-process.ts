// The streaming function alone in a process of its own, for its memory (idle-stream.ts): the router bundled by
// esbuild as serverless-esbuild bundles it for Lambda (one ESM file, the native module external), served by the
// local stream runner with the Lambda streaming shim, with the stack's environment. Its RSS is what one Lambda
// instance of the function would hold, plus the stream runner (a small HTTP server) instead of the Lambda runtime.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface StreamProcess {
  readonly url: string;
  /** The process's resident set size and V8 heap in use now, in MB, and the CPU it used so far, in ms. */
  usage(): Promise<{ readonly rss: number; readonly heap: number; readonly cpuMs: number }>;
  stop(): Promise<void>;
}

const ENTRY = `
import { installLambdaStreamingShim } from ${JSON.stringify(join(ROOT, 'local/lambda-streaming.ts'))};
import { startStreamRunner } from ${JSON.stringify(join(ROOT, 'local/stream-runner.ts'))};
installLambdaStreamingShim();
const { handler } = await import(${JSON.stringify(join(ROOT, 'functions/streams/router.ts'))});
const runner = await startStreamRunner({ handler });
process.on('message', () => {
  const cpu = process.cpuUsage();
  process.send({ ...process.memoryUsage(), cpuMs: (cpu.user + cpu.system) / 1000 });
});
process.send({ url: runner.url });
`;

const nextMessage = (child: ChildProcess) =>
  new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Record<string, unknown>));
    child.once('exit', (code) => reject(new Error(`the stream process exited with ${code}`)));
  });

/** `maxOldSpaceMb`: the V8 heap limit, as the Lambda runtime derives it from the memory size. */
export const startStreamProcess = async (
  env: Readonly<Record<string, string>>,
  maxOldSpaceMb?: number,
): Promise<StreamProcess> => {
  const dir = await mkdtemp(join(tmpdir(), 'deployer-bench-stream-'));
  const entry = join(dir, 'entry.ts');
  await writeFile(entry, ENTRY);
  const outfile = join(dir, 'stream.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    keepNames: true,
    external: ['@node-rs/argon2'],
    nodePaths: [join(ROOT, 'node_modules')],
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'error',
  });
  const child = fork(outfile, [], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    // Not this process's flags (tsx's loader): the bundle runs on plain Node, as in Lambda.
    execArgv: maxOldSpaceMb === undefined ? [] : [`--max-old-space-size=${maxOldSpaceMb}`],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const { url } = (await nextMessage(child)) as { url: string };
  return {
    url,
    usage: async () => {
      const answer = nextMessage(child);
      child.send('rss');
      const usage = await answer;
      return {
        rss: Number(usage['rss']) / 2 ** 20,
        heap: Number(usage['heapUsed']) / 2 ** 20,
        cpuMs: Number(usage['cpuMs']),
      };
    },
    stop: async () => {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
};
