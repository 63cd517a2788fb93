// What startAgent is given (AgentOptions) and the settings the agent runs with: every number checked once, in the
// order the options are listed, and turned into milliseconds where the agent waits on it.
import { resolve, join } from 'node:path';
import { TRANSPORTS, type Transport } from './channel.js';
import type { ChannelResponse, Tag } from '../protocol/messages.js';
import { normalizeServer } from './state.js';

export interface AgentOptions {
  readonly server: string;
  readonly name: string;
  readonly tags?: readonly Tag[];
  /** Used when there is no state file yet (or it is for another server), and once more if the token is refused. */
  readonly enrollToken?: string;
  /** Enroll (or check the existing enrollment), save the state and stop: start() resolves, exited gives 0. */
  readonly enrollOnly?: boolean;
  readonly stateDir: string;
  /** Where commands run, each in `<work-dir>/<command id>`; default `<state-dir>/work`. */
  readonly workDir?: string;
  readonly concurrency?: number;
  /** Heartbeats while busy (and over HTTP while polling); the server's shorter value wins. */
  readonly heartbeatSeconds?: number;
  /** Pings over the socket while idle; the server's shorter value wins. */
  readonly idlePingSeconds?: number;
  readonly pollWaitSeconds?: number;
  /** auto: the WebSocket, else long polling; websocket: never polls; polling: never opens a socket. */
  readonly transport?: Transport;
  /** After a `replaced` message, how long before connecting again. */
  readonly replacedWaitSeconds?: number;
  /** While falling back to long polling, how often the WebSocket is tried again. */
  readonly socketRetrySeconds?: number;
  /** The same when the socket had opened before in this process (an outage, not a blocking proxy); at most the above. */
  readonly socketRetryAfterOutageSeconds?: number;
  /** Between SIGTERM and SIGKILL when a command's process group is killed. */
  readonly killGraceSeconds?: number;
  /** How long stop() lets running commands finish when not told otherwise. */
  readonly shutdownGraceSeconds?: number;
  /** After the commands ended, how long stop() keeps trying to deliver their output and completions. */
  readonly flushTimeoutSeconds?: number;
  /** How long enrollment keeps retrying an unreachable server before startAgent rejects. */
  readonly connectTimeoutSeconds?: number;
  /** How long records of reported commands are kept. */
  readonly keepRecordsDays?: number;
  /** The environment commands start from; default process.env (agent-internal variables are always removed). */
  readonly env?: NodeJS.ProcessEnv;
  readonly log?: (line: string) => void;
  readonly fetch?: typeof fetch;
  /** Told every channel answer (GET /api/v1/agent/channel): the release it names (agent/update.ts). */
  readonly onChannel?: (channel: ChannelResponse) => void;
  /** Output batching (tests). */
  readonly batchIntervalMs?: number;
  /** How long after a command starts its first output batch may go (agent/output.ts FIRST_BATCH_MS). */
  readonly firstBatchMs?: number;
}

export const DEFAULTS = {
  concurrency: 4,
  heartbeatSeconds: 25,
  idlePingSeconds: 25,
  pollWaitSeconds: 20,
  transport: 'auto',
  replacedWaitSeconds: 60,
  socketRetrySeconds: 600,
  socketRetryAfterOutageSeconds: 30,
  killGraceSeconds: 5,
  shutdownGraceSeconds: 30,
  flushTimeoutSeconds: 10,
  connectTimeoutSeconds: 60,
  keepRecordsDays: 7,
} as const;

/** The options, checked: paths resolved, durations in milliseconds (seconds where the agent counts in seconds). */
export interface AgentSettings {
  readonly server: string;
  readonly stateDir: string;
  readonly workDir: string;
  readonly concurrency: number;
  readonly heartbeatMs: number;
  readonly idlePingMs: number;
  readonly pollWaitSeconds: number;
  readonly transport: Transport;
  readonly replacedWaitMs: number;
  readonly socketRetryMs: number;
  /**
   * While polling after the socket had worked in this process: a socket that opened before is not blocked by a proxy,
   * so its failures are a server restart or an outage, soon over.
   */
  readonly socketRetryAfterOutageMs: number;
  readonly killGraceMs: number;
  readonly shutdownGraceSeconds: number;
  readonly flushTimeoutMs: number;
  readonly keepRecordsDays: number;
}

/** `value` (or `fallback`) when it is a finite number > 0 (>= 0 with `zero`, whole with `integer`), else throws. */
export const positive = (
  name: string,
  value: number | undefined,
  fallback: number,
  { integer = false, zero = false } = {},
): number => {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0 || (!zero && v === 0) || (integer && !Number.isInteger(v))) {
    throw new Error(
      `${name} must be a ${integer ? 'whole ' : ''}number ${zero ? '>= 0' : '> 0'} (got ${String(value)})`,
    );
  }
  return v;
};

/** Checks the options (throws an Error naming the first bad one); connectTimeoutSeconds is checked when enrolling. */
export const agentSettings = (options: AgentOptions): AgentSettings => {
  if (typeof options.server !== 'string' || !/^https?:\/\/[^/]/.test(options.server))
    throw new Error(`server must be an http(s) URL (got '${options.server}')`);
  if (typeof options.name !== 'string' || options.name.trim() === '') throw new Error('name must not be empty');
  const stateDir = resolve(options.stateDir);
  const workDir = resolve(options.workDir ?? join(stateDir, 'work'));
  const concurrency = positive('concurrency', options.concurrency, DEFAULTS.concurrency, { integer: true });
  const heartbeatMs = positive('heartbeatSeconds', options.heartbeatSeconds, DEFAULTS.heartbeatSeconds) * 1000;
  const idlePingMs = positive('idlePingSeconds', options.idlePingSeconds, DEFAULTS.idlePingSeconds) * 1000;
  const pollWaitSeconds = positive('pollWaitSeconds', options.pollWaitSeconds, DEFAULTS.pollWaitSeconds, {
    integer: true,
  });
  const transport = options.transport ?? DEFAULTS.transport;
  if (!TRANSPORTS.includes(transport))
    throw new Error(`transport must be one of ${TRANSPORTS.join(', ')} (got '${String(options.transport)}')`);
  const seconds = (name: keyof typeof DEFAULTS & keyof AgentOptions, zero: boolean) =>
    positive(name, options[name] as number | undefined, DEFAULTS[name] as number, { zero });
  return {
    server: normalizeServer(options.server),
    stateDir,
    workDir,
    concurrency,
    heartbeatMs,
    idlePingMs,
    pollWaitSeconds,
    transport,
    replacedWaitMs: seconds('replacedWaitSeconds', true) * 1000,
    socketRetryMs: seconds('socketRetrySeconds', false) * 1000,
    socketRetryAfterOutageMs: seconds('socketRetryAfterOutageSeconds', false) * 1000,
    killGraceMs: seconds('killGraceSeconds', true) * 1000,
    shutdownGraceSeconds: seconds('shutdownGraceSeconds', true),
    flushTimeoutMs: seconds('flushTimeoutSeconds', true) * 1000,
    keepRecordsDays: options.keepRecordsDays ?? DEFAULTS.keepRecordsDays,
  };
};
