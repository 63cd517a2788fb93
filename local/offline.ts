// Runs serverless-offline (through osls) as a child process in its own process group, so stopping it also
// stops its worker threads. It bundles the handlers with esbuild exactly as `serverless package` does.
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { bundleKey, keepBundles, useCachedBundles } from './bundle-cache.js';
import { ROOT } from './service-definition.js';
import { waitFor } from './ports.js';

export interface Offline {
  readonly url: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * serverless-offline's own per-request chatter; our handlers log one JSON access line per request instead. Its
 * WebSocket server also says `received connection` (and nothing else) for every agent that opens the agent socket.
 */
const NOISE = [
  /^\s*$/,
  /\(λ: [\w-]+\) RequestId: /,
  /^(ANY|GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) .+\(λ: [\w-]+\)$/,
  /^\s*received connection\s*$/,
];

/** A line of serverless-offline's own not worth a person's attention (`--verbose` shows them all). */
export const isOfflineNoise = (line: string): boolean => NOISE.some((n) => n.test(line));

const kill = (child: ChildProcess, signal: NodeJS.Signals): void => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
};

export const startOffline = async (options: {
  httpPort: number;
  lambdaPort: number;
  /** The agents' WebSocket API and its @connections endpoint. */
  websocketPort: number;
  env: Readonly<Record<string, string>>;
  log: (line: string) => void;
  verbose?: boolean;
}): Promise<Offline> => {
  const args = [
    join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'),
    'offline',
    'start',
    '--stage',
    'local',
    '--host',
    '127.0.0.1',
    '--httpPort',
    String(options.httpPort),
    '--lambdaPort',
    String(options.lambdaPort),
    '--websocketPort',
    String(options.websocketPort),
    '--useInProcess',
  ];
  // Not under .esbuild: `serverless package` cleans that whole folder.
  const workFolder = join('.build', `offline-${options.httpPort}`);
  // Bundles of the same sources are reused (local/bundle-cache.ts); a watching stack rebuilds as files change.
  const key = process.env['DEPLOYER_WATCH'] === 'on' ? undefined : await bundleKey();
  const prebuilt = key !== undefined && (await useCachedBundles(key, workFolder).catch(() => false));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      ...options.env,
      ESBUILD_WORK_FOLDER: workFolder,
      DEPLOYER_PREBUILT_BUNDLES: prebuilt ? 'on' : 'off',
      SLS_TELEMETRY_DISABLED: '1',
      SLS_NOTIFICATIONS_MODE: 'off',
      FORCE_COLOR: '0',
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let ready = false;
  const startup: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      if (!ready) startup.push(line);
      if (ready && (options.verbose || !isOfflineNoise(line))) options.log(line);
      if (line.includes('Server ready')) ready = true;
      if (!ready && /^(✘ \[ERROR\]|Error:)/.test(line.trim()))
        failedToStart?.(new Error(`serverless-offline failed to start:\n${startup.join('\n')}`));
    });
  }
  let failedToStart: ((error: Error) => void) | undefined;
  const exited = new Promise<never>((_, reject) => {
    failedToStart = (error) =>
      setTimeout(() => reject(new Error(`${error.message}\n${startup.slice(-20).join('\n')}`)), 300);
    child.once('exit', (code) => reject(new Error(`serverless-offline exited (code ${code}):\n${startup.join('\n')}`)));
  });
  exited.catch(() => undefined);
  const url = `http://127.0.0.1:${options.httpPort}`;
  try {
    await Promise.race([exited, waitFor('serverless-offline', async () => ready, 90_000, 100)]);
  } catch (error) {
    kill(child, 'SIGKILL');
    throw error;
  }
  const keeping =
    key === undefined || prebuilt ? Promise.resolve() : keepBundles(key, workFolder).catch(() => undefined);
  return {
    url,
    pid: child.pid,
    stop: async () => {
      await new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const timer = setTimeout(() => kill(child, 'SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(timer);
          done();
        });
        kill(child, 'SIGTERM');
      });
      await keeping;
      await rm(join(ROOT, workFolder), { recursive: true, force: true });
    },
  };
};
