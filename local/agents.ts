// The two agents `npm start` runs beside the service (decisions.md section 1): local-1 (env=local, role=web) and
// local-2 (env=local, role=db), each with its state and work folders under `dir`. They run what ships: the one-file
// agent the stack's front serves (programs/build.ts), written to `<dir>/deployer-agent.mjs` and started as a child
// process of this one (`node <dir>/deployer-agent.mjs --server ... --state-dir <dir>/<name> --name <name>`, cwd
// `dir`), its output lines passed to `log`; `inProcess` runs the TypeScript sources in this process instead (benches
// that look inside the agent). Each start
// hands each a fresh single-use enrollment token carrying its tags, written straight to the table (the server
// applies the token's tags, not the agent's): an agent whose saved agent token still works keeps its target; one
// whose target is gone (deleted, or an --in-memory stack) enrolls again.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startAgent, type RunningAgent } from '../agent/agent.js';
import { ENROLL_TOKEN_ENV } from '../agent/cli.js';
import { ENROLLMENT_TOKEN_PREFIX } from '../domain/targets/enrollment.js';
import type { Tag } from '../domain/targets/types.js';
import { randomTokens } from '../infra/crypto/tokens.js';
import { randomUUID } from 'node:crypto';
import { DynamoEnrollmentTokenRepository } from '../infra/dynamodb/target-repository.js';
import { LOCAL_CREDENTIALS } from './emulators.js';
import type { Stack } from './stack.js';

export const LOCAL_AGENTS = [
  {
    name: 'local-1',
    tags: [
      { key: 'env', value: 'local' },
      { key: 'role', value: 'web' },
    ],
  },
  {
    name: 'local-2',
    tags: [
      { key: 'env', value: 'local' },
      { key: 'role', value: 'db' },
    ],
  },
] as const;

/** A one-hour, single-use enrollment token for a global target with these tags, created without going through the API. */
export const localEnrollmentToken = async (
  stack: Pick<Stack, 'dynamoEndpoint' | 'env'>,
  tags: readonly Tag[] = [],
): Promise<string> => {
  const client = new DynamoDBClient({
    endpoint: stack.dynamoEndpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    const token = `${ENROLLMENT_TOKEN_PREFIX}${randomTokens.random(32)}`;
    const now = new Date();
    await new DynamoEnrollmentTokenRepository(
      DynamoDBDocumentClient.from(client),
      stack.env['TABLE_NAME'] as string,
    ).create({
      id: randomUUID(),
      tokenHash: randomTokens.hash(token),
      tags,
      maxUses: 1,
      uses: 0,
      tenantId: null,
      environmentId: null,
      createdBy: 'npm-start',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 3_600_000).toISOString(),
    });
    return token;
  } finally {
    client.destroy();
  }
};

/**
 * What commands of the embedded agents start from: the basics of a login shell, never this process's own
 * environment (which holds the service's configuration, the encryption keyring among it).
 */
const commandEnvironment = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'TERM'].flatMap((k) =>
      process.env[k] === undefined ? [] : [[k, process.env[k]]],
    ),
  );

/** An agent `npm start` runs: its target, and how to stop it (as RunningAgent). */
export type LocalAgent = Pick<RunningAgent, 'targetId' | 'stop' | 'exited'> & {
  /** The agent's process when it runs the bundle; undefined in this process. */
  readonly pid: number | undefined;
};

/** Writes the bundle the stack's front serves to `<dir>/deployer-agent.mjs` (mode 0755); its path. */
export const writeAgentBundle = async (stack: Pick<Stack, 'programs' | 'programFiles'>, dir: string) => {
  const release = stack.programs.agent;
  const file = release === undefined ? undefined : stack.programFiles.get(release.path);
  if (release === undefined || file === undefined) throw new Error('the stack serves no agent bundle');
  await mkdir(dir, { recursive: true });
  const path = join(dir, release.file);
  await writeFile(path, file.contents, { mode: 0o755 });
  return path;
};

export interface SpawnAgentOptions {
  /** The one-file agent (deployer-agent.mjs). */
  readonly bundle: string;
  /** Arguments after the bundle: --server, --state-dir, --name, ... */
  readonly args: readonly string[];
  /** Its working directory. */
  readonly cwd: string;
  /** Given in the environment (DEPLOYER_AGENT_ENROLL_TOKEN), not on the command line other users can read. */
  readonly enrollToken?: string;
  /** Each line it writes (stdout and stderr). */
  readonly log: (line: string) => void;
  /** Its environment (commands start from it); default: the basics of a login shell. */
  readonly env?: NodeJS.ProcessEnv;
  /** How long it may take to say it started; default 60 s. */
  readonly startTimeoutMs?: number;
}

/**
 * Starts the one-file agent as a child process with this Node (`process.execPath`) and resolves once it logged
 * `started: target <id>`; rejects with its last lines when it exits first. Its target follows what it logs (a new one
 * after it enrolled again). stop(): SIGTERM (a clean stop: running commands get its shutdown grace), SIGTERM again
 * after `graceSeconds` (running commands are killed, results still delivered), SIGKILL 15 s later.
 */
export const spawnAgent = (options: SpawnAgentOptions): Promise<LocalAgent> => {
  const child = spawn(process.execPath, [options.bundle, ...options.args], {
    cwd: options.cwd,
    env: {
      ...(options.env ?? commandEnvironment()),
      ...(options.enrollToken === undefined ? {} : { [ENROLL_TOKEN_ENV]: options.enrollToken }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let targetId = '';
  const last: string[] = [];
  let onStarted: (() => void) | undefined;
  const onLine = (line: string) => {
    last.push(line);
    if (last.length > 20) last.shift();
    const target = /(?:started: target|as target) (\S+?),? /.exec(line)?.[1];
    if (target !== undefined) targetId = target;
    if (/ started: target /.test(line)) onStarted?.();
    options.log(line);
  };
  createInterface({ input: child.stdout }).on('line', onLine);
  createInterface({ input: child.stderr }).on('line', onLine);
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128))),
  );
  const stop = async ({ graceSeconds = 5 }: { graceSeconds?: number } = {}): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const again = setTimeout(() => child.kill('SIGTERM'), graceSeconds === 0 ? 100 : graceSeconds * 1000);
    const kill = setTimeout(() => child.kill('SIGKILL'), graceSeconds * 1000 + 15_000);
    await exited;
    clearTimeout(again);
    clearTimeout(kill);
  };
  const agent: LocalAgent = {
    get targetId() {
      return targetId;
    },
    pid: child.pid,
    stop,
    exited,
  };
  return new Promise<LocalAgent>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop({ graceSeconds: 0 });
      reject(
        new Error(`the agent did not start within ${(options.startTimeoutMs ?? 60_000) / 1000} s: ${last.join(' | ')}`),
      );
    }, options.startTimeoutMs ?? 60_000);
    onStarted = () => {
      clearTimeout(timer);
      resolve(agent);
    };
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the agent exited with code ${code} before it started: ${last.join(' | ')}`));
    });
  });
};

export const startLocalAgents = async (
  stack: Pick<Stack, 'baseUrl' | 'dynamoEndpoint' | 'env' | 'programs' | 'programFiles'>,
  dir: string,
  log: (line: string) => void,
  options: { readonly inProcess?: boolean } = {},
): Promise<readonly LocalAgent[]> => {
  if (options.inProcess === true)
    return Promise.all(
      LOCAL_AGENTS.map(async (agent) => {
        const enrollToken = await localEnrollmentToken(stack, agent.tags);
        const running = await startAgent({
          server: stack.baseUrl,
          name: agent.name,
          tags: [...agent.tags],
          enrollToken,
          stateDir: join(dir, agent.name),
          log,
          env: commandEnvironment(),
        });
        return {
          get targetId() {
            return running.targetId;
          },
          pid: undefined,
          stop: running.stop,
          exited: running.exited,
        };
      }),
    );
  const bundle = await writeAgentBundle(stack, dir);
  return Promise.all(
    LOCAL_AGENTS.map(async (agent) =>
      spawnAgent({
        bundle,
        cwd: dir,
        args: [
          '--server',
          stack.baseUrl,
          '--state-dir',
          join(dir, agent.name),
          '--name',
          agent.name,
          ...agent.tags.flatMap((tag) => ['--tag', `${tag.key}=${tag.value}`]),
        ],
        enrollToken: await localEnrollmentToken(stack, agent.tags),
        log,
      }),
    ),
  );
};
