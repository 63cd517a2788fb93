// The agent's command line, parsed into startAgent's options (no side effects: main.ts acts on the result).
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS } from './settings.js';
import { TRANSPORTS, type Transport } from './channel.js';
import type { Tag } from '../protocol/messages.js';
import { AGENT_VERSION } from './version.js';

export const ENROLL_TOKEN_ENV = 'DEPLOYER_AGENT_ENROLL_TOKEN';
export const DEFAULT_AUTO_UPDATE_MINUTES = 60;

export const USAGE = `Usage: node deployer-agent.mjs --server URL [--enroll TOKEN] [options]
       (installed: /opt/deployer-agent/deployer-agent; in the checkout: npm run agent -- --server URL ...)

Runs the deployment agent: enrolls this host as a target (once), then takes commands from the server and runs them.
It keeps a WebSocket open to the server to be woken when work is queued; when the socket cannot be opened (a proxy
refusing the upgrade), it long-polls over HTTP instead and tries the socket again every 10 minutes.

Options:
  --server URL                  the service, e.g. http://localhost:3000 (required)
  --enroll TOKEN                enrollment token; needed only for the first start (or env ${ENROLL_TOKEN_ENV}); the
                                target gets the token's tenant, environment and tags
  --enroll-only                 enroll (or check the saved enrollment), print what the server answered and exit:
                                0 when enrolled, 1 with the server's message when refused (install.sh uses it)
  --name NAME                   the target's name (default: this host's name)
  --tag KEY=VALUE               accepted for compatibility and not applied: the server gives a target its
                                enrollment token's tags (the agent logs them); change them in the console or API
  --concurrency N               commands run at once (default ${DEFAULTS.concurrency})
  --state-dir DIR               enrollment and command records (default .local/agents/<name>)
  --work-dir DIR                where commands run, one directory each (default <state-dir>/work)
  --heartbeat-seconds N         seconds between heartbeats (default ${DEFAULTS.heartbeatSeconds})
  --poll-wait-seconds N         long-poll wait (default ${DEFAULTS.pollWaitSeconds})
  --transport MODE              auto: the WebSocket, falling back to long polling when it cannot be opened;
                                websocket: the WebSocket only (keeps reconnecting); polling: HTTP long polling only
                                (default ${DEFAULTS.transport})
  --kill-grace-seconds N        between SIGTERM and SIGKILL when a command is killed (default ${DEFAULTS.killGraceSeconds})
  --shutdown-grace-seconds N    on SIGTERM/SIGINT, how long running commands may finish (default ${DEFAULTS.shutdownGraceSeconds})
  --auto-update                 keep this agent at the build the server ships: on start, every
                                --auto-update-minutes and on each channel answer, a newer build of the same major
                                version is downloaded, its SHA-256 checked, written over this file, and the agent
                                restarts as it once no command runs (one-file agent only)
  --auto-update-minutes N       between two looks at the server's build (default ${DEFAULT_AUTO_UPDATE_MINUTES})
  --version                     print the agent version
  -h, --help                    print this help
`;

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

export interface CliOptions {
  readonly server: string;
  readonly enrollToken?: string;
  readonly name: string;
  readonly tags: Tag[];
  readonly concurrency: number;
  readonly stateDir: string;
  readonly workDir: string;
  readonly heartbeatSeconds: number;
  readonly pollWaitSeconds: number;
  readonly killGraceSeconds: number;
  readonly shutdownGraceSeconds: number;
  readonly transport: Transport;
  readonly enrollOnly: boolean;
  /** Minutes between looks at the server's agent build; undefined: no --auto-update. */
  readonly autoUpdateMinutes?: number;
}

export type CliCommand =
  | { readonly kind: 'help' }
  | { readonly kind: 'version'; readonly version: string }
  | { readonly kind: 'run'; readonly options: CliOptions };

/** The rule the server applies to tag keys. */
const TAG_KEY = /^[A-Za-z0-9][A-Za-z0-9_./-]{0,62}$/;

const number = (flag: string, raw: string | undefined, fallback: number, { integer = false, min = 0 } = {}): number => {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new CliError(`--${flag} must be a ${integer ? 'whole ' : ''}number >= ${min} (got '${raw}')`);
  }
  return value;
};

export const parseTag = (raw: string): Tag => {
  const at = raw.indexOf('=');
  if (at <= 0) throw new CliError(`--tag takes KEY=VALUE (got '${raw}')`);
  const key = raw.slice(0, at).trim();
  const value = raw.slice(at + 1).trim();
  if (!TAG_KEY.test(key))
    throw new CliError(`tag key '${key}' must be 1 to 63 letters, digits, _ . / or -, starting with a letter or digit`);
  if (value.length > 255) throw new CliError(`the value of tag '${key}' must be at most 255 characters`);
  return { key, value };
};

/** A name as a single directory name. */
const directoryName = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');

export const parseCli = (
  argv: readonly string[],
  environment: { hostname: string; cwd: string; env: NodeJS.ProcessEnv },
): CliCommand => {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: 'string' },
        enroll: { type: 'string' },
        name: { type: 'string' },
        tag: { type: 'string', multiple: true },
        concurrency: { type: 'string' },
        'state-dir': { type: 'string' },
        'work-dir': { type: 'string' },
        'heartbeat-seconds': { type: 'string' },
        'poll-wait-seconds': { type: 'string' },
        'kill-grace-seconds': { type: 'string' },
        'shutdown-grace-seconds': { type: 'string' },
        transport: { type: 'string' },
        'enroll-only': { type: 'boolean' },
        'auto-update': { type: 'boolean' },
        'auto-update-minutes': { type: 'string' },
        version: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const values = parsed.values;
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version', version: AGENT_VERSION };

  const server = values.server?.trim();
  if (server === undefined || server === '') throw new CliError('--server URL is required');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CliError(`--server must be a URL such as http://localhost:3000 (got '${server}')`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliError(`--server must be an http:// or https:// URL (got '${server}')`);

  const name = (values.name ?? environment.hostname).trim();
  if (name === '' || name.length > 255) throw new CliError('--name must be 1 to 255 characters');
  const tags = (values.tag ?? []).map(parseTag);
  const duplicate = tags.find((tag, i) => tags.findIndex((t) => t.key === tag.key) !== i);
  if (duplicate !== undefined) throw new CliError(`tag '${duplicate.key}' is given twice`);

  const transport = (values.transport ?? DEFAULTS.transport) as Transport;
  if (!TRANSPORTS.includes(transport))
    throw new CliError(`--transport must be one of ${TRANSPORTS.join(', ')} (got '${values.transport}')`);

  const enrollToken = values.enroll ?? environment.env[ENROLL_TOKEN_ENV];
  const stateDir = resolve(environment.cwd, values['state-dir'] ?? join('.local', 'agents', directoryName(name)));
  return {
    kind: 'run',
    options: {
      server: server.replace(/\/+$/, ''),
      ...(enrollToken === undefined || enrollToken === '' ? {} : { enrollToken }),
      name,
      tags,
      concurrency: number('concurrency', values.concurrency, DEFAULTS.concurrency, { integer: true, min: 1 }),
      stateDir,
      workDir: values['work-dir'] === undefined ? join(stateDir, 'work') : resolve(environment.cwd, values['work-dir']),
      heartbeatSeconds: number('heartbeat-seconds', values['heartbeat-seconds'], DEFAULTS.heartbeatSeconds, { min: 1 }),
      pollWaitSeconds: number('poll-wait-seconds', values['poll-wait-seconds'], DEFAULTS.pollWaitSeconds, {
        integer: true,
        min: 1,
      }),
      killGraceSeconds: number('kill-grace-seconds', values['kill-grace-seconds'], DEFAULTS.killGraceSeconds),
      shutdownGraceSeconds: number(
        'shutdown-grace-seconds',
        values['shutdown-grace-seconds'],
        DEFAULTS.shutdownGraceSeconds,
      ),
      transport,
      enrollOnly: values['enroll-only'] === true,
      ...(values['auto-update'] === true
        ? {
            autoUpdateMinutes: number(
              'auto-update-minutes',
              values['auto-update-minutes'],
              DEFAULT_AUTO_UPDATE_MINUTES,
              { min: 1 / 60 },
            ),
          }
        : {}),
    },
  };
};
