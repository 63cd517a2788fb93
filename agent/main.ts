// The agent's command line: `npm run agent -- --server URL --enroll TOKEN --name NAME --tag k=v` (see --help).
// SIGTERM / SIGINT stop it cleanly (running commands get the shutdown grace period); a second one kills them now.
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startAgent } from './agent.js';
import { CliError, parseCli, USAGE } from './cli.js';
import { restart, startUpdater, type Updater } from './update.js';
import { AGENT_VERSION } from './version.js';

const main = async (): Promise<number> => {
  let command;
  try {
    command = parseCli(process.argv.slice(2), { hostname: hostname(), cwd: process.cwd(), env: process.env });
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    process.stderr.write(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.kind === 'version') {
    process.stdout.write(`${command.version}\n`);
    return 0;
  }
  const { options } = command;
  const say = (message: string) => process.stdout.write(`${new Date().toISOString()} [${options.name}] ${message}\n`);
  // --auto-update replaces the file this module is in: the one-file agent (not the sources under tsx).
  const file = fileURLToPath(import.meta.url);
  const autoUpdate = options.autoUpdateMinutes !== undefined && file.endsWith('.mjs');
  if (options.autoUpdateMinutes !== undefined && !autoUpdate)
    say(`--auto-update works for the one-file agent (deployer-agent.mjs) only, not ${file}; ignoring it`);
  let updater: Updater | undefined;
  let agent;
  try {
    agent = await startAgent({
      ...options,
      ...(autoUpdate ? { onChannel: (channel) => updater?.consider(channel.release, channel.accepted) } : {}),
    });
  } catch (error) {
    process.stderr.write(`${new Date().toISOString()} [${options.name}] ${(error as Error).message}\n`);
    return 1;
  }
  if (options.enrollOnly) return agent.exited;
  if (autoUpdate)
    updater = startUpdater({
      agent,
      version: AGENT_VERSION,
      file,
      everyMs: (options.autoUpdateMinutes ?? 60) * 60_000,
      log: say,
    });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    const line = (message: string) =>
      process.stdout.write(`${new Date().toISOString()} [${options.name}] ${message}\n`);
    if (signals === 1) {
      line(`received ${signal}; stopping (send it again to kill running commands at once)`);
      void agent.stop();
    } else {
      line(`received ${signal} again; killing running commands`);
      void agent.stop({ graceSeconds: 0 });
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const code = await agent.exited;
  updater?.dispose();
  // Stopped to become the build just installed (not by a signal): started again as it.
  if (updater?.installed !== undefined && signals === 0 && code === 0) return restart(file, say);
  return code;
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
