// The agent's command line: `npm run agent -- --server URL --enroll TOKEN --name NAME --tag k=v` (see --help).
// SIGTERM / SIGINT stop it cleanly (running commands get the shutdown grace period); a second one kills them now.
import { hostname } from 'node:os';
import { startAgent } from './agent.js';
import { CliError, parseCli, USAGE } from './cli.js';

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
  let agent;
  try {
    agent = await startAgent(options);
  } catch (error) {
    process.stderr.write(`${new Date().toISOString()} [${options.name}] ${(error as Error).message}\n`);
    return 1;
  }
  if (options.enrollOnly) return agent.exited;
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
  return agent.exited;
};

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
