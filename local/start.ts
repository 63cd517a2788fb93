// `npm start`: the whole service on this machine. `npm start -- --in-memory` keeps nothing on disk;
// `--verbose` shows serverless-offline's own request lines too; `--with-idp` adds a local OpenID provider, registered
// as "Local SSO" (local/local-idp.ts). PORT overrides 3000.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LOCAL_AGENTS, startLocalAgents, type LocalAgent } from './agents.js';
import { JavaMissingError } from './emulators.js';
import { alive, announceInMemoryStack } from './in-memory-stacks.js';
import { disableLocalIdp, localIdpBanner, registerLocalIdp, startLocalOidcProvider } from './local-idp.js';
import { formatLogLine } from './log-format.js';
import type { OidcProvider } from './oidc-provider.js';
import { localBootstrapAdmin } from './secrets.js';
import { portInUse } from './ports.js';
import { ROOT } from './service-definition.js';
import { startStack, type Stack } from './stack.js';

process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'; // see README, "Node versions"

const DATA_DIR = join(ROOT, '.local');
const LOCK_FILE = join(DATA_DIR, 'stack.lock');

const USAGE = `Usage: npm start [-- options]

Starts the whole service on this machine: DynamoDB Local, the SQS emulator, the functions (serverless-offline),
the streaming function and two agents (local-1, local-2), on http://localhost:3000.

Options:
  --in-memory   keep nothing on disk (default: data in .local/)
  --port N      the port of the API (default: PORT or 3000)
  --watch       rebuild and reload the functions when a source file changes
  --verbose     show serverless-offline's own request lines too
  --with-idp    also start a local OpenID provider with a few users, registered as "Local SSO" (try SSO)
  -h, --help    show this help
`;

const parseOptions = () => {
  try {
    return parseArgs({
      options: {
        'in-memory': { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        watch: { type: 'boolean', default: false },
        'with-idp': { type: 'boolean', default: false },
        port: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
};
const values = parseOptions();
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (values.watch) process.env['DEPLOYER_WATCH'] = 'on';

const port = Number(values.port ?? process.env['PORT'] ?? 3000);
const inMemory = values['in-memory'] ?? false;
const say = (line: string) => process.stdout.write(`${line}\n`);
const fail = (message: string): never => {
  process.stderr.write(`\n${message}\n\n`);
  process.exit(1);
};

interface Lock {
  pid: number;
  port: number;
  children: number[];
  /** Where `npm run rotate-keys` finds the running stack's data (local/rotate-keys.ts). */
  dynamoEndpoint?: string;
  tableName?: string;
}

/** One stack per data directory: a second start says who holds it; a dead holder's leftovers are stopped. */
const acquireLock = async (): Promise<void> => {
  await mkdir(DATA_DIR, { recursive: true });
  const existing = await readFile(LOCK_FILE, 'utf8').then(
    (t) => JSON.parse(t) as Lock,
    () => undefined,
  );
  if (existing !== undefined && alive(existing.pid) && existing.pid !== process.pid) {
    fail(
      `deployer is already running (pid ${existing.pid}) at http://localhost:${existing.port}, using ${DATA_DIR}.\n` +
        `Use that one, stop it (Ctrl-C in its terminal, or kill ${existing.pid}), or start another with --in-memory and PORT=<other port>.`,
    );
  }
  for (const child of existing?.children ?? []) if (alive(child)) process.kill(child, 'SIGKILL'); // orphans of a crash
  await writeFile(LOCK_FILE, JSON.stringify({ pid: process.pid, port, children: [] } satisfies Lock));
};

/** One line per start-up step, with its time. */
const step = (name: string, ms: number): void => void say(`  ${name.padEnd(44, '.')} ${(ms / 1000).toFixed(1)} s`);

/**
 * "Local SSO": registered (or pointed at this start's provider) with `--with-idp`; without it, over kept data, the
 * one an earlier `--with-idp` start left is disabled (its provider is not running). The banner's lines.
 */
const localSsoLines = async (idp: OidcProvider | undefined, adminEmail: string | undefined): Promise<string[]> => {
  if (idp === undefined) {
    if (inMemory) return [];
    const line = await disableLocalIdp(adminEmail).catch(
      (error: unknown) => `  Local SSO       could not be disabled: ${(error as Error).message}`,
    );
    return line === undefined ? [] : [line];
  }
  const since = Date.now();
  try {
    await registerLocalIdp(idp, adminEmail);
    step('Local SSO (OpenID provider)', Date.now() - since);
    return localIdpBanner(idp);
  } catch (error) {
    say(`  Local SSO could not be registered: ${(error as Error).message}`);
    return [`  Local SSO       not registered (see above)`];
  }
};

const main = async (): Promise<void> => {
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail(`PORT must be a port number, not '${values.port ?? process.env['PORT']}'.`);
  if (!inMemory) await acquireLock();
  if (await portInUse(port))
    fail(`Port ${port} is already in use by another program. Free it, or start with PORT=<other port> npm start.`);

  const admin = localBootstrapAdmin();
  const started = Date.now();
  say(`Starting the deployment service${inMemory ? ' (in memory)' : ''}...`);
  // The local OpenID provider first: the functions must be allowed to reach it (loopback, over http).
  let idp: OidcProvider | undefined;
  if (values['with-idp'] === true) idp = await startLocalOidcProvider();
  const allowedHosts = [process.env['OIDC_ALLOWED_HOSTS'], idp?.host].filter((h) => h !== undefined && h !== '');
  let stack: Stack;
  try {
    stack = await startStack({
      port,
      dataDir: inMemory ? undefined : join(DATA_DIR, 'dynamodb'),
      log: (line) => {
        const shown = values.verbose ? line : formatLogLine(line);
        if (shown !== undefined) say(shown);
      },
      progress: step,
      secretsDir: inMemory ? undefined : DATA_DIR,
      bootstrapAdmin: admin,
      verbose: values.verbose ?? false,
      detachEmulators: true,
      warm: true,
      ...(idp === undefined ? {} : { env: { OIDC_ALLOWED_HOSTS: allowedHosts.join(',') } }),
    });
  } catch (error) {
    await idp?.stop();
    if (!inMemory) await rm(LOCK_FILE, { force: true });
    if (error instanceof JavaMissingError) return fail(error.message);
    return fail(`Could not start: ${(error as Error).message}`);
  }
  // An in-memory stack says so to `npm run rotate-keys` (which has nothing to rotate in it).
  const unannounce = inMemory ? await announceInMemoryStack(stack.port).catch(() => undefined) : undefined;
  if (!inMemory)
    await writeFile(
      LOCK_FILE,
      JSON.stringify({
        pid: process.pid,
        port: stack.port,
        children: [...stack.childPids],
        dynamoEndpoint: stack.dynamoEndpoint,
        ...(stack.env['TABLE_NAME'] === undefined ? {} : { tableName: stack.env['TABLE_NAME'] }),
      } satisfies Lock),
    );

  // The agents keep their state (agent token, command records) beside the data, or in a temporary folder.
  const agentsDir = inMemory ? await mkdtemp(join(tmpdir(), 'deployer-agents-')) : join(DATA_DIR, 'agents');
  let agents: readonly LocalAgent[] = [];
  const agentsSince = Date.now();
  try {
    agents = await startLocalAgents(stack, agentsDir, say);
    step(`agents (${agents.length})`, Date.now() - agentsSince);
  } catch (error) {
    say(`  The local agents did not start: ${(error as Error).message}`);
  }

  const idpLines = await localSsoLines(idp, admin.email);

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const agentList = LOCAL_AGENTS.map((a) => `${a.name} (${a.tags.map((t) => `${t.key}=${t.value}`).join(', ')})`).join(
    ', ',
  );
  say(
    [
      '',
      `  Deployment service ready in ${seconds} s`,
      '',
      `  API             ${stack.baseUrl}/api/v1   (try: curl ${stack.baseUrl}/api/v1/health)`,
      `  Console         ${stack.baseUrl}/   (a web console: sign in, deploy, watch)`,
      `  OpenAPI         ${stack.baseUrl}/api/v1/openapi.json`,
      `  Admin           ${admin.email} / ${admin.password}   (local only: BOOTSTRAP_ADMIN_EMAIL / BOOTSTRAP_ADMIN_PASSWORD` +
        `${stack.bootstrapAdmin === 'exists' ? '; users already existed, so nothing was created' : ''})`,
      `  Data            ${inMemory ? 'in memory: nothing is kept after Ctrl-C' : `${join(DATA_DIR, 'dynamodb')} (npm start -- --in-memory keeps nothing)`}`,
      `  DynamoDB        ${stack.dynamoEndpoint}${stack.external ? ' (AWS_ENDPOINT_URL)' : ' (DynamoDB Local)'}`,
      `  SQS             ${stack.sqsEndpoint}${stack.external ? ' (AWS_ENDPOINT_URL)' : ' (local-aws-sqs)'}`,
      `  Running         HTTP functions (serverless-offline), stream function, ${Object.keys(stack.queues).length} queues`,
      `  Agents          ${agents.length === LOCAL_AGENTS.length ? agentList : 'not running (see above)'}; work in ${agentsDir}`,
      `  Agent socket    ${stack.env['AGENT_SOCKET_URL'] ?? 'none (agents poll)'}   (commands are pushed to connected agents)`,
      ...idpLines,
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );

  // In order: the agents first (a running command gets 5 s, its output and completion still reach the service),
  // then the functions and pollers, then the emulators (DynamoDB Local runs in its own process group, so a
  // terminal's Ctrl-C reaches only this process). A second signal, a second or more later, kills running commands
  // at once (the same signal often arrives twice at once: from the terminal's process group and relayed by tsx).
  let stoppingSince: number | undefined;
  const stop = async (signal: string) => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince > 1000) {
        say(`${signal} again: killing running commands now`);
        await Promise.all(agents.map((a) => a.stop({ graceSeconds: 0 })));
      }
      return;
    }
    stoppingSince = Date.now();
    say(`\n${signal}: stopping the agents (running commands get 5 s), then the functions, then the emulators...`);
    await Promise.all(agents.map((a) => a.stop({ graceSeconds: 5 })));
    await stack.stop();
    await idp?.stop();
    await unannounce?.();
    if (inMemory) await rm(agentsDir, { recursive: true, force: true });
    if (!inMemory) await rm(LOCK_FILE, { force: true });
    say('Stopped.');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));
};

await main();
