// What every command gets: the process's streams and environment (main.ts fills them in), its parsed flags, and
// the API client made from --url / DEPLOYER_URL and the credentials, built only when the command calls the service.
import { createApi, type Api } from './api.js';
import { stringFlag, type FlagSpecs, type Parsed } from './args.js';
import { resolveCredentials, type Env } from './credentials.js';
import { UsageError } from './errors.js';
import { colorWanted, type Style } from './render.js';

export interface Io {
  readonly env: Env;
  /** Writes to stdout / stderr as they are (add the newline). */
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stdoutTty: boolean;
  readonly stderrTty: boolean;
  /**
   * Asks on the terminal (stderr); hidden: no echo (a password, a secret). When stdin is not a terminal, its next
   * line, without asking. Undefined at the end of stdin.
   */
  readonly prompt: (question: string, hidden: boolean) => Promise<string | undefined>;
  readonly newId: () => string;
}

export interface Command {
  readonly name: string;
  readonly summary: string;
  /** `deployer deploy --action REF [options]`. */
  readonly usage: string;
  readonly description?: string;
  readonly flags: FlagSpecs;
  readonly examples: readonly string[];
  /** Answers the exit code. */
  readonly run: (ctx: Context, parsed: Parsed) => Promise<number>;
}

export const COMMON_FLAGS: FlagSpecs = {
  url: { kind: 'string', value: 'URL', help: 'the service (default: $DEPLOYER_URL)' },
  'api-key-file': { kind: 'string', value: 'FILE', help: 'read the API key from FILE (else $DEPLOYER_API_KEY, ...)' },
  output: { kind: 'string', value: 'text|json', short: 'o', help: 'json: one JSON document on stdout, no progress' },
  help: { kind: 'boolean', short: 'h', help: 'this help' },
};

export interface Context {
  readonly io: Io;
  readonly command: string;
  readonly json: boolean;
  /** Styles of stdout and stderr (color on a terminal unless NO_COLOR). */
  readonly out: Style;
  readonly err: Style;
  /** The server's base URL (usage error when missing). */
  server(): string;
  api(): Promise<Api>;
  /** A line on stdout / stderr. */
  print(line: string): void;
  note(line: string): void;
}

/** Plain http is for this machine only: the bearer credential crosses no network in clear. */
export const isLoopback = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);

export const makeContext = (io: Io, command: string, parsed: Parsed): Context => {
  const output = stringFlag(parsed, 'output') ?? 'text';
  if (output !== 'text' && output !== 'json')
    throw new UsageError(`--output must be text or json (got "${output}")`, command);
  let api: Promise<Api> | undefined;
  const server = () => {
    const raw = stringFlag(parsed, 'url') ?? io.env['DEPLOYER_URL'];
    if (!raw) throw new UsageError('no service URL: set DEPLOYER_URL or pass --url', command);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(`--url / DEPLOYER_URL is not a URL (got "${raw}")`, command);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new UsageError(`--url / DEPLOYER_URL must be http(s) (got "${raw}")`, command);
    if (url.protocol === 'http:' && !isLoopback(url.hostname) && io.env['DEPLOYER_ALLOW_HTTP'] !== '1')
      throw new UsageError(
        `refusing to send credentials over plain http to ${url.host}: use https (or set DEPLOYER_ALLOW_HTTP=1)`,
        command,
      );
    return url.origin + url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  };
  return {
    io,
    command,
    json: output === 'json',
    out: { color: colorWanted(io.stdoutTty, io.env) },
    err: { color: colorWanted(io.stderrTty, io.env) },
    server,
    api: () =>
      (api ??= (async () => {
        const base = server();
        return createApi(base, await resolveCredentials(base, io.env, stringFlag(parsed, 'api-key-file')));
      })()),
    print: (line) => io.stdout(`${line}\n`),
    note: (line) => io.stderr(`${line}\n`),
  };
};
