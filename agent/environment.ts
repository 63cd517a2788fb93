// A command's environment: the agent's own minus its internals, plus the command's variables and ids. Before any of
// it reaches a process, every variable name is checked against the service's rule (protocol/environment-names.ts):
// an old server or a tampered record must not hand a command a variable that changes how a program starts.
import { isAllowedVariableName } from '../protocol/environment-names.js';
import type { AgentCommand } from '../protocol/messages.js';

/** The exit code of a command the agent refused to run (as a shell reports "cannot execute"). */
export const REFUSED_EXIT_CODE = 126;

/** The first variable of a command the agent must not put into an environment, with the error to report. */
export const refusedVariable = (
  variables: unknown,
): { readonly name: string; readonly message: string } | undefined => {
  if (variables === undefined || variables === null) return undefined;
  if (typeof variables !== 'object' || Array.isArray(variables))
    return {
      name: '(variables)',
      message: "Refused to run: the command's variables are not an object of name to value",
    };
  for (const name of Object.keys(variables)) {
    if (!isAllowedVariableName(name))
      return { name, message: `Refused to run: variable ${name} is not allowed in a command's environment` };
  }
  return undefined;
};

const AGENT_INTERNAL = /^(npm_|DEPLOYER_AGENT_)|^NODE$/;
const NPM_PATH_ENTRY = /node_modules[\\/](\.bin|@npmcli[\\/]run-script)/;

/** The environment of a command: the agent's minus its own internals, plus the command's variables and ids. */
export const commandEnv = (
  base: NodeJS.ProcessEnv,
  command: AgentCommand,
  warn: (message: string) => void = () => undefined,
): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && !AGENT_INTERNAL.test(name)) env[name] = value;
  }
  // `npm run agent` puts the repository's node_modules/.bin first on PATH: that is the agent's business only.
  if (base['npm_lifecycle_event'] !== undefined && env['PATH'] !== undefined) {
    env['PATH'] = env['PATH']
      .split(':')
      .filter((entry) => !NPM_PATH_ENTRY.test(entry))
      .join(':');
  }
  for (const [name, value] of Object.entries(command.variables ?? {})) {
    if (name === '' || name.includes('=') || name.includes('\0') || typeof value !== 'string' || value.includes('\0')) {
      warn(`skipped variable '${name.replace(/\0/g, '')}' of ${command.id}: not usable as an environment variable`);
      continue;
    }
    env[name] = value;
  }
  env['DEPLOYER_DEPLOYMENT_ID'] = command.deployment_id;
  env['DEPLOYER_STEP_ID'] = command.step_id;
  env['DEPLOYER_COMMAND_ID'] = command.id;
  env['DEPLOYER_ACTION_SLUG'] = command.action?.slug ?? '';
  env['DEPLOYER_ACTION_VERSION'] = command.action?.version ?? '';
  return env;
};
