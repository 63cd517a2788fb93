// The command table, help and the one place errors become exit codes and stderr text. main.ts gives it the process.
import { parseArgs, type FlagSpecs } from './args.js';
import { makeContext, type Command, type Io } from './command.js';
import { deploy } from './commands/deploy.js';
import { logs, status, wait } from './commands/follow.js';
import { login, logout } from './commands/login.js';
import { cancel, queue, redeploy, targets } from './commands/manage.js';
import { CliError, EXIT, RefusedError, UsageError } from './errors.js';
import { CLI_VERSION } from './version.js';

export const COMMANDS: readonly Command[] = [
  deploy,
  status,
  logs,
  wait,
  cancel,
  redeploy,
  queue,
  targets,
  login,
  logout,
];

export const EXIT_CODES_HELP = `Exit codes:
  0  success (a deployment waited for succeeded)
  1  the deployment failed or was rolled back
  2  usage: unknown command or flag, bad value, missing DEPLOYER_URL or credentials
  3  refused by the service (400, 401, 403, 404, 409, 422): its message and code on stderr
  4  the service could not be reached (network error; 5xx or 429 after retrying reads)
  5  the deployment was cancelled
  6  --timeout elapsed (the deployment keeps running)`;

export const mainHelp =
  (): string => `deployer ${CLI_VERSION}: deploy, follow and manage deployments from pipelines and terminals

Usage: deployer <command> [options]     deployer <command> --help

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join('\n')}

Configuration (environment):
  DEPLOYER_URL              the service, e.g. https://deployer.example.com (or --url)
  DEPLOYER_API_KEY          an API key (or --api-key-file FILE)
  DEPLOYER_CLIENT_ID        with DEPLOYER_CLIENT_SECRET: an OAuth client (client credentials)
                            otherwise the login saved by \`deployer login\`
  DEPLOYER_ALLOW_HTTP=1     allow plain http to a host other than this machine (else https only)
  NO_COLOR                  no colors even on a terminal

Examples:
  export DEPLOYER_URL=https://deployer.example.com DEPLOYER_API_KEY=dpl_...
  deployer deploy --action restart-nginx --version "^1.1" --tag role=web --wait
  deployer logs 3f1c... --follow
  deployer queue

${EXIT_CODES_HELP}
`;

const flagLines = (flags: FlagSpecs): string => {
  const rows = Object.entries(flags).map(([name, spec]) => [
    `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.value ? ` ${spec.value}` : ''}`,
    spec.help,
  ]);
  const width = 30;
  return rows
    .map(([left = '', right = '']) =>
      left.length <= width ? `  ${left.padEnd(width)}  ${right}` : `  ${left}\n  ${' '.repeat(width)}  ${right}`,
    )
    .join('\n');
};

export const commandHelp = (command: Command): string => `Usage: ${command.usage}

${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.${command.description ? `\n${command.description}` : ''}

Options:
${flagLines(command.flags)}

Examples:
${command.examples.map((e) => `  ${e}`).join('\n')}

${EXIT_CODES_HELP}
`;

/** The text an error prints on stderr. */
export const describeError = (error: CliError): string => {
  if (error instanceof RefusedError) {
    const lines = [`deployer: refused (${error.status} ${error.code}): ${error.message}`];
    const details = error.details as Record<string, unknown> | undefined;
    const freezes = details?.['active_freezes'];
    if (Array.isArray(freezes)) {
      for (const f of freezes as { name?: string; ends_at?: string }[])
        lines.push(`  frozen by "${f.name ?? ''}" until ${f.ends_at ?? '?'}`);
      if (details?.['can_override'] === true) lines.push('  an admin may pass --override-freeze --reason TEXT');
    }
    const fields = details?.['fields'] ?? details?.['errors'];
    if (Array.isArray(fields))
      for (const f of fields as { field?: string; message?: string }[])
        lines.push(`  ${f.field ?? ''}: ${f.message ?? ''}`);
    return lines.join('\n');
  }
  return `deployer: ${error.message}`;
};

/** Runs one invocation; answers the exit code. */
export const run = async (argv: readonly string[], io: Io): Promise<number> => {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = COMMANDS.find((c) => c.name === rest[0]);
    if (topic !== undefined) io.stdout(commandHelp(topic));
    else io[name === undefined ? 'stderr' : 'stdout'](mainHelp());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    io.stdout(`deployer ${CLI_VERSION}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  try {
    if (command === undefined)
      throw new UsageError(
        name.startsWith('-') ? `unknown flag ${name} (flags go after the command)` : `unknown command "${name}"`,
      );
    const parsed = parseArgs(rest, command.flags, command.name);
    if (parsed.flags['help'] === true) {
      io.stdout(commandHelp(command));
      return EXIT.ok;
    }
    return await command.run(makeContext(io, command.name, parsed), parsed);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    io.stderr(`${describeError(error)}\n`);
    if (error instanceof UsageError) {
      const usage = COMMANDS.find((c) => c.name === error.command)?.usage;
      io.stderr(
        usage
          ? `Usage: ${usage}\nRun deployer ${error.command} --help for the options.\n`
          : 'Run deployer --help for the commands.\n',
      );
    }
    return error.exitCode;
  }
};
