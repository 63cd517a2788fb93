// The agent: enrolls (or reuses its state file), keeps a WebSocket open to be woken when work is queued (or
// long-polls when it cannot), drains its inbox over HTTP, runs up to `concurrency` commands at once, stops commands
// the server cancels, and shuts down cleanly. Nothing connects to the host: every connection is one the agent makes.
//
// startAgent -> enroll or load state -> recover records of a previous run -> heartbeat loop + channel loop
// channel    -> GET /agent/channel -> open the socket -> drain on open and on every wake -> closed: reconnect
//               (the socket cannot be opened 3 times in a row: long polling, the socket tried again every 10 min)
// stop()     -> stop taking work -> commands finish within the grace period, else are killed -> deliveries
//               flushed -> socket closed (1000)
import { mkdir } from 'node:fs/promises';
import { arch, hostname, platform, release } from 'node:os';
import { join, resolve } from 'node:path';
import { backoffDelay, sleep } from './backoff.js';
import {
  cadenceSeconds,
  Drainer,
  heartbeatDelay,
  heartbeatPlan,
  parseServerMessage,
  TRANSPORTS,
  type Cadence,
  type Link,
  type Transport,
} from './channel.js';
import { AbortedError, AgentClient, HttpError, UnavailableError } from './client.js';
import {
  CANCELLED_BY_SERVER,
  CommandExecution,
  LOST_EXIT_CODE,
  reportCompletion,
  type ExecutionContext,
} from './command.js';
import { AGENT_INSTANCE_HEADER, AGENT_VERSION_HEADER, AGENT_VERSION_INCOMPATIBLE } from '../protocol/headers.js';
import type { AgentCommand, ChannelResponse, HeartbeatFrame, Tag } from '../protocol/messages.js';
import { FIRST_BATCH_MS } from './output.js';
import { CANCEL_EXIT_CODE, endLostGroup } from './runner.js';
import {
  CommandStore,
  normalizeServer,
  readOrCreateInstance,
  readState,
  writeState,
  type AgentState,
  type CommandRecord,
} from './state.js';
import { AGENT_VERSION } from './version.js';

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

export interface RunningAgent {
  /** The target this agent acts for (a new one after it had to enroll again). */
  readonly targetId: string;
  /** Whether anything runs, waits, or is still to be delivered (an update waits until it is not). */
  readonly busy: boolean;
  /** GET /api/v1/agent/channel with this agent's token (also a heartbeat); retried until `signal` aborts. */
  channel(signal: AbortSignal): Promise<ChannelResponse>;
  /** The bytes at a path of the server, fetched with this agent's token (at most `maxBytes`). */
  download(url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array>;
  /** Stops polling, lets running commands finish within the grace period, kills the rest, flushes reports. */
  stop(options?: { graceSeconds?: number }): Promise<void>;
  /** Resolves with the exit code once the agent has stopped: 0 after stop(), 1 when it could not go on. */
  readonly exited: Promise<number>;
}

/** How long a clean stop waits for its goodbye to reach the server. */
const GOODBYE_TIMEOUT_MS = 3_000;

export const DEFAULTS = {
  concurrency: 4,
  heartbeatSeconds: 15,
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

const PRUNE_EVERY_MS = 6 * 3_600_000;
/** Consecutive failures to open the socket (while GET /agent/channel works) before auto falls back to polling. */
const OPEN_FAILURES_BEFORE_FALLBACK = 3;
const SOCKET_OPEN_TIMEOUT_MS = 10_000;
/** How long a close handshake may take before the agent stops waiting for it. */
const SOCKET_CLOSE_TIMEOUT_MS = 3_000;
/** A connection that stayed up this long ends a streak of drops: the next drop reconnects at once again. */
const STABLE_CONNECTION_MS = 60_000;

type OpenedSocket = { readonly ws: WebSocket; readonly url: string };
type SessionEnd = {
  readonly code: number;
  readonly reason: string;
  readonly replaced: boolean;
  readonly revoked: boolean;
  readonly lastedMs: number;
};

const describeClose = (code: number, reason: string): string => `code ${code}${reason === '' ? '' : ` ${reason}`}`;

const minutes = (ms: number): string =>
  ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}` : `${ms / 1000} s`;

/** Enrolls or reuses the state file, then runs until stop(). Rejects with a clear Error when enrollment fails. */
export const startAgent = async (options: AgentOptions): Promise<RunningAgent> => {
  const agent = new Agent(options);
  await agent.start();
  return {
    get targetId() {
      return agent.targetId; // changes if the agent had to enroll again
    },
    get busy() {
      return agent.working;
    },
    channel: (signal) => agent.channel(signal),
    download: (url, maxBytes, signal) => agent.download(url, maxBytes, signal),
    stop: (o) => agent.stop(o),
    exited: agent.exited,
  };
};

const positive = (
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

class Agent {
  targetId = '';
  readonly exited: Promise<number>;
  private resolveExited!: (code: number) => void;

  private readonly server: string;
  private readonly stateDir: string;
  private readonly workDir: string;
  private readonly concurrency: number;
  private readonly heartbeatMs: number;
  private readonly idlePingMs: number;
  private readonly pollWait: number;
  private readonly transport: Transport;
  private readonly replacedWaitMs: number;
  private readonly socketRetryMs: number;
  /**
   * While polling after the socket had worked in this process: a socket that opened before is not blocked by a proxy,
   * so its failures are a server restart or an outage, soon over.
   */
  private readonly socketRetryAfterOutageMs: number;
  /** The socket opened at least once in this process (its failures since are an outage, not a blocking proxy). */
  private socketEverOpened = false;
  private readonly killGraceMs: number;
  private readonly shutdownGraceSeconds: number;
  private readonly flushTimeoutMs: number;
  private readonly client: AgentClient;
  private readonly store: CommandStore;
  private readonly context: ExecutionContext;
  private readonly writeLine: (line: string) => void;

  private readonly executions = new Map<string, CommandExecution>();
  private readonly queued: AgentCommand[] = [];
  /** Command ids this process is handling right now (queued, running, or re-sending a completion). */
  private readonly busy = new Set<string>();
  /** Commands delivered again while this process still handled them: looked at again once it is done. */
  private readonly redelivered = new Map<string, AgentCommand>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly stopController = new AbortController();
  private readonly deliveryController = new AbortController();
  private readonly heartbeatController = new AbortController();
  private readonly graceOver = new AbortController();
  private pollController: AbortController | undefined;
  private pollMax = 0;
  /** The server takes a command's last output with its completion (GET /agent/channel said so). */
  private outputInCompletion = false;
  private loops: Promise<void>[] = [];
  private pruneTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private exitCode = 0;
  private reenrolling: Promise<void> | undefined;
  private reenrolled = false;

  /** How the agent is connected; the heartbeat loop picks its transport and cadence from it. */
  private link: Link = 'connecting';
  private cadence: Cadence;
  private pollWaitNow: number;
  private lastBeatAt = 0;
  /** Aborted (and renewed) to make the heartbeat loop plan again at once: the link or the cadence changed. */
  private heartbeatReplan = new AbortController();
  private socket: WebSocket | undefined;
  private endSession: ((code: number, reason: string) => void) | undefined;
  private readonly drainer = new Drainer(
    () => this.drainOnce(),
    (error) => this.log(`draining the inbox failed: ${(error as Error).message}`),
  );
  /** The last drain stopped because every slot was taken: a freed slot drains again. */
  private inboxMayHoldMore = false;
  private readonly unknownMessages = new Set<string>();
  private instance = '';

  constructor(private readonly options: AgentOptions) {
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
    if (typeof options.server !== 'string' || !/^https?:\/\/[^/]/.test(options.server))
      throw new Error(`server must be an http(s) URL (got '${options.server}')`);
    if (typeof options.name !== 'string' || options.name.trim() === '') throw new Error('name must not be empty');
    this.server = normalizeServer(options.server);
    this.stateDir = resolve(options.stateDir);
    this.workDir = resolve(options.workDir ?? join(this.stateDir, 'work'));
    this.concurrency = positive('concurrency', options.concurrency, DEFAULTS.concurrency, { integer: true });
    this.heartbeatMs = positive('heartbeatSeconds', options.heartbeatSeconds, DEFAULTS.heartbeatSeconds) * 1000;
    this.idlePingMs = positive('idlePingSeconds', options.idlePingSeconds, DEFAULTS.idlePingSeconds) * 1000;
    this.pollWait = positive('pollWaitSeconds', options.pollWaitSeconds, DEFAULTS.pollWaitSeconds, { integer: true });
    this.transport = options.transport ?? DEFAULTS.transport;
    if (!TRANSPORTS.includes(this.transport))
      throw new Error(`transport must be one of ${TRANSPORTS.join(', ')} (got '${String(options.transport)}')`);
    this.replacedWaitMs =
      positive('replacedWaitSeconds', options.replacedWaitSeconds, DEFAULTS.replacedWaitSeconds, { zero: true }) * 1000;
    this.socketRetryMs = positive('socketRetrySeconds', options.socketRetrySeconds, DEFAULTS.socketRetrySeconds) * 1000;
    this.socketRetryAfterOutageMs =
      positive(
        'socketRetryAfterOutageSeconds',
        options.socketRetryAfterOutageSeconds,
        DEFAULTS.socketRetryAfterOutageSeconds,
      ) * 1000;
    this.cadence = { busyMs: this.heartbeatMs, idleMs: this.idlePingMs };
    this.pollWaitNow = this.pollWait;
    this.killGraceMs =
      positive('killGraceSeconds', options.killGraceSeconds, DEFAULTS.killGraceSeconds, { zero: true }) * 1000;
    this.shutdownGraceSeconds = positive(
      'shutdownGraceSeconds',
      options.shutdownGraceSeconds,
      DEFAULTS.shutdownGraceSeconds,
      { zero: true },
    );
    this.flushTimeoutMs =
      positive('flushTimeoutSeconds', options.flushTimeoutSeconds, DEFAULTS.flushTimeoutSeconds, { zero: true }) * 1000;
    this.writeLine = options.log ?? ((line) => console.log(line));
    this.client = new AgentClient({
      server: this.server,
      fetch: options.fetch ?? globalThis.fetch,
      log: (message) => this.log(message),
      onUnauthorized: (usedToken) => this.unauthorized(usedToken),
      // No retry can change the versions: say why and stop with exit code 1 (a supervisor shows it, not a loop).
      onIncompatible: (message) => this.fatal(`The server refused this agent: ${message} Stopping.`),
    });
    this.store = new CommandStore(this.stateDir);
    this.context = {
      client: this.client,
      store: this.store,
      workDir: this.workDir,
      baseEnv: options.env ?? process.env,
      killGraceMs: this.killGraceMs,
      log: (message) => this.log(message),
      deliverySignal: this.deliveryController.signal,
      outputInCompletion: () => this.outputInCompletion,
      batch: {
        firstBatchMs: options.firstBatchMs ?? FIRST_BATCH_MS,
        ...(options.batchIntervalMs === undefined ? {} : { intervalMs: options.batchIntervalMs }),
      },
    };
  }

  private log(message: string): void {
    this.writeLine(`${new Date().toISOString()} [${this.options.name}] ${message}`);
  }

  async start(): Promise<void> {
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    await mkdir(this.workDir, { recursive: true, mode: 0o700 });
    await this.store.init();
    // Names this installation to the server: it pushes commands to its socket and hands back only to it the pushed
    // ones it has not acknowledged (this folder's records keep any id from running twice).
    this.instance = await readOrCreateInstance(this.stateDir);
    this.client.setInstance(this.instance);
    const state = await readState(this.stateDir);
    if (state !== undefined && normalizeServer(state.server) === this.server) {
      this.use(state);
      this.log(
        this.options.enrollOnly === true
          ? `already enrolled with ${this.server} as target ${state.target_id} (state in ${this.stateDir}); keeping this identity${this.options.enrollToken === undefined || this.options.enrollToken === '' ? '' : ', the enrollment token was not used'}`
          : `using the enrollment in ${this.stateDir} (target ${state.target_id})`,
      );
    } else if (this.options.enrollToken !== undefined && this.options.enrollToken !== '') {
      if (state !== undefined)
        this.log(`the state in ${this.stateDir} belongs to ${state.server}; enrolling with ${this.server}`);
      await this.enroll();
    } else if (state !== undefined) {
      throw new Error(
        `The state in ${this.stateDir} belongs to the server ${state.server}, not ${this.server}; pass --enroll TOKEN to enroll with ${this.server}`,
      );
    } else {
      throw new Error(
        `This agent is not enrolled yet (no state in ${this.stateDir}); start it once with --enroll TOKEN`,
      );
    }
    if (this.options.enrollOnly === true) {
      this.resolveExited(0);
      return;
    }
    await this.recover();
    if (this.transport === 'polling') {
      this.link = 'polling';
      this.loops = [this.heartbeatLoop(), this.pollLoop()];
    } else {
      this.loops = [this.heartbeatLoop(), this.channelLoop()];
    }
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
    this.log(
      `started: target ${this.targetId}, server ${this.server}, up to ${this.concurrency} command(s) at once, working in ${this.workDir}, transport ${this.transport}`,
    );
  }

  private use(state: AgentState): void {
    this.targetId = state.target_id;
    this.client.setToken(state.agent_token);
  }

  private async enroll(): Promise<void> {
    const tags = this.options.tags ?? [];
    let answer;
    try {
      answer = await this.client.register(
        {
          enrollment_token: this.options.enrollToken ?? '',
          name: this.options.name,
          hostname: hostname(),
          os: `${platform()} ${release()}`,
          arch: arch(),
          agent_version: AGENT_VERSION,
          tags,
        },
        positive('connectTimeoutSeconds', this.options.connectTimeoutSeconds, DEFAULTS.connectTimeoutSeconds, {
          zero: true,
        }) * 1000,
      );
    } catch (error) {
      if (error instanceof HttpError && error.code === AGENT_VERSION_INCOMPATIBLE)
        throw new Error(`Enrollment refused by ${this.server}: ${error.message}`);
      if (error instanceof HttpError && (error.status === 401 || error.status === 403)) {
        throw new Error(
          `Enrollment refused by ${this.server}: the enrollment token is unknown or expired (${error.message})`,
        );
      }
      if (error instanceof HttpError)
        throw new Error(`Enrollment failed: ${this.server} answered ${error.status} ${error.code}: ${error.message}`);
      if (error instanceof UnavailableError)
        throw new Error(`Could not reach ${this.server} to enroll: ${error.message}`);
      throw error;
    }
    if (typeof answer.target_id !== 'string' || typeof answer.agent_token !== 'string') {
      throw new Error(`Enrollment failed: ${this.server} answered without target_id and agent_token`);
    }
    const state: AgentState = {
      server: this.server,
      target_id: answer.target_id,
      agent_token: answer.agent_token,
      name: this.options.name,
      enrolled_at: new Date().toISOString(),
    };
    await writeState(this.stateDir, state);
    this.use(state);
    // What the server applied: the enrollment token's tags, whatever --tag said.
    const applied = Array.isArray(answer.tags)
      ? answer.tags.map((t) => `${t.key}=${t.value}`).join(', ') || 'none'
      : 'not reported by the server';
    this.log(
      `enrolled with ${this.server} as target ${state.target_id}${answer.short_id === undefined ? '' : ` (${answer.short_id})`}, tags ${applied}`,
    );
    if (tags.length > 0)
      this.log('--tag is not applied by the server: a target gets its enrollment token’s tags (set them on the token)');
  }

  /** A 401 on an authenticated call: enroll again once when we can, else give up. */
  private async unauthorized(_usedToken: string): Promise<void> {
    if (this.reenrolling !== undefined) return this.reenrolling;
    if (this.reenrolled || this.options.enrollToken === undefined || this.options.enrollToken === '') {
      this.fatal(
        this.reenrolled
          ? 'The server refused the new agent token as well; stopping.'
          : 'The server refused the agent token (the target was deleted or the server data was reset). Start the agent again with --enroll TOKEN.',
      );
      throw new HttpError(401, 'INVALID_TOKEN', 'The agent token is no longer valid');
    }
    this.log('the server refused the agent token (target deleted or server data reset); enrolling again');
    this.reenrolling = this.enroll()
      .then(() => {
        this.reenrolled = true;
        // The open socket (if any) was the old target's: connect again with the new token.
        this.socket?.close(1000, 'enrolled again');
      })
      .catch((error: unknown) => {
        this.fatal(`Enrolling again failed: ${(error as Error).message}`);
        throw new HttpError(401, 'INVALID_TOKEN', 'The agent token is no longer valid');
      })
      .finally(() => {
        this.reenrolling = undefined;
      });
    return this.reenrolling;
  }

  private fatal(message: string): void {
    if (this.stopping !== undefined && this.exitCode === 1) return;
    this.log(message);
    this.exitCode = 1;
    this.deliveryController.abort(); // nothing can be delivered any more
    void this.stop({ graceSeconds: 0 });
  }

  /** Commands of a previous run: those that never completed are reported lost; unacknowledged results re-sent. */
  private async recover(): Promise<void> {
    const records = await this.store.list();
    for (const record of records) {
      if (record.status === 'reported') continue;
      let pending: CommandRecord = record;
      if (record.status === 'started' || record.result === undefined) {
        // Its processes may still run (the agent was killed, not the host): they end before it is reported lost.
        if (record.pid !== undefined) {
          const outcome = await endLostGroup(record.pid, record.pid_start_time, this.killGraceMs);
          if (outcome === 'ended') this.log(`ended the processes ${record.id} left running (group ${record.pid})`);
          if (outcome === 'unknown' || outcome === 'not-ours')
            this.log(`could not tell whether process group ${record.pid} is still ${record.id}'s; left alone`);
        }
        const now = new Date().toISOString();
        pending = {
          ...record,
          status: 'completed',
          result: {
            exit_code: LOST_EXIT_CODE,
            started_at: record.started_at,
            completed_at: now,
            error_message: 'The agent restarted while the command was running',
          },
          updated_at: now,
        };
        await this.store.save(pending);
        this.log(`${record.id} was running when the agent stopped; reporting it as lost (exit ${LOST_EXIT_CODE})`);
      } else {
        this.log(`re-sending the completion of ${record.id}`);
      }
      this.resend(pending);
    }
    await this.prune();
  }

  private async prune(): Promise<void> {
    const days = this.options.keepRecordsDays ?? DEFAULTS.keepRecordsDays;
    try {
      const removed = await this.store.prune(Date.now(), days * 86_400_000, this.workDir);
      if (removed > 0) this.log(`removed ${removed} record(s) of commands older than ${days} days`);
    } catch (error) {
      this.log(`could not prune old command records: ${(error as Error).message}`);
    }
  }

  private track(id: string, task: Promise<void>): void {
    this.busy.add(id);
    const tracked = task
      .catch((error: unknown) => this.log(`unexpected error with ${id}: ${(error as Error).stack ?? String(error)}`))
      .finally(() => {
        this.busy.delete(id);
        this.tasks.delete(tracked);
        const again = this.redelivered.get(id);
        if (again !== undefined) {
          this.redelivered.delete(id);
          void this.receive(again);
        }
      });
    this.tasks.add(tracked);
  }

  private resend(record: CommandRecord): void {
    this.track(record.id, reportCompletion(this.context, record));
  }

  private setLink(link: Link): void {
    if (this.link === link) return;
    this.link = link;
    this.replanHeartbeats();
  }

  private replanHeartbeats(): void {
    this.heartbeatReplan.abort();
    this.heartbeatReplan = new AbortController();
  }

  /** Anything running, waiting, or still to be delivered. */
  private isBusy(): boolean {
    return this.executions.size > 0 || this.queued.length > 0 || this.tasks.size > 0;
  }

  /** One loop for every transport: over the socket when it is open, else over HTTP when polling or busy. */
  private async heartbeatLoop(): Promise<void> {
    const signal = this.heartbeatController.signal;
    while (!signal.aborted) {
      const plan = heartbeatPlan(this.link, this.isBusy(), this.cadence);
      const delay = heartbeatDelay(plan, this.lastBeatAt, Date.now(), this.cadence);
      if (plan.via === 'none' || delay > 0) {
        await sleep(delay, AbortSignal.any([signal, this.heartbeatReplan.signal]));
        continue;
      }
      const running = [...this.executions.keys()];
      this.lastBeatAt = Date.now();
      if (plan.via === 'socket' && this.socket?.readyState === WebSocket.OPEN) {
        const frame: HeartbeatFrame = { action: 'heartbeat', running_command_ids: running };
        this.socket.send(JSON.stringify(frame));
        continue;
      }
      try {
        await this.client.heartbeat(running, signal);
      } catch (error) {
        if (error instanceof HttpError) this.log(`heartbeat refused: ${error.status} ${error.message}`);
        // unreachable: the client logged the outage once; the next tick tries again
      }
    }
  }

  /** Long polling, as the only transport or as the fallback; ends when `keepGoing` turns false (after its poll). */
  private async pollLoop(keepGoing: () => boolean = () => true): Promise<void> {
    const stop = this.stopController.signal;
    let refusals = 0;
    while (!stop.aborted && keepGoing()) {
      const free = Math.max(0, this.concurrency - this.executions.size - this.queued.length);
      const controller = new AbortController();
      this.pollController = controller;
      this.pollMax = free;
      const started = Date.now();
      let answer;
      try {
        answer = await this.client.poll(this.pollWaitNow, free, AbortSignal.any([stop, controller.signal]));
        refusals = 0;
      } catch (error) {
        if (error instanceof AbortedError) continue;
        this.log(`polling failed: ${(error as Error).message}`);
        await sleep(backoffDelay(refusals++), stop);
        continue;
      } finally {
        this.pollController = undefined;
      }
      for (const id of answer.cancel) this.cancel(id);
      for (const command of answer.commands) await this.receive(command);
      // An answer with nothing to start (only cancels this agent already acted on) must not turn into a busy loop.
      if (answer.commands.length === 0 && Date.now() - started < 1000) await sleep(1000 - (Date.now() - started), stop);
    }
  }

  /**
   * Asks for the server's channel, opens the socket and serves it until it closes, then again. Each attempt starts
   * with GET /agent/channel (whose 401 goes into the unauthorized flow). In auto mode, falls back to long polling
   * when the server offers no socket or the socket cannot be opened 3 times in a row.
   */
  private async channelLoop(): Promise<void> {
    const stop = this.stopController.signal;
    let openFailures = 0;
    let drops = 0;
    let refusals = 0;
    let ready: OpenedSocket | undefined;
    while (!stop.aborted) {
      if (ready === undefined) {
        let channel: ChannelResponse;
        try {
          channel = await this.client.channel(stop);
          refusals = 0;
        } catch (error) {
          if (stop.aborted || error instanceof AbortedError) break;
          if (error instanceof HttpError && error.status === 404 && this.transport === 'auto') {
            // A server from before the channel existed.
            ready = await this.fallback(`${this.server}/api/v1/agent/channel`, 'the server has no channel endpoint');
            continue;
          }
          this.log(`asking for the channel failed: ${(error as Error).message}`);
          await sleep(backoffDelay(refusals++), stop);
          continue;
        }
        this.applyChannel(channel);
        if (channel.socket_url === null) {
          if (this.transport === 'auto') {
            ready = await this.fallback(`${this.server}/api/v1/agent/channel`, 'the server offers no WebSocket');
          } else {
            if (refusals === 0) this.log('the server offers no WebSocket; asking again (transport websocket)');
            await sleep(backoffDelay(refusals++), stop);
          }
          continue;
        }
        const opened = await this.openSocket(channel.socket_url);
        if ('error' in opened) {
          if (stop.aborted) break;
          openFailures += 1;
          if (this.transport === 'auto' && openFailures >= OPEN_FAILURES_BEFORE_FALLBACK) {
            openFailures = 0;
            ready = await this.fallback(channel.socket_url, opened.error);
            continue;
          }
          if (openFailures === 1 || openFailures % 10 === 0)
            this.log(
              `could not open the WebSocket ${channel.socket_url} (${opened.error}); trying again (${openFailures} failed in a row)`,
            );
          await sleep(backoffDelay(openFailures - 1), stop);
          continue;
        }
        ready = opened;
      }
      openFailures = 0;
      const end = await this.session(ready);
      ready = undefined;
      if (stop.aborted) {
        this.log(`WebSocket closed (${describeClose(end.code, end.reason)})`);
        break;
      }
      if (end.lastedMs >= STABLE_CONNECTION_MS) drops = 0;
      if (end.replaced) {
        this.log(
          `WebSocket closed (${describeClose(end.code, end.reason)}); connecting again in ${minutes(this.replacedWaitMs)}`,
        );
        await sleep(this.replacedWaitMs, stop);
      } else if (end.revoked) {
        this.log(`WebSocket closed (${describeClose(end.code, end.reason)}); checking the agent token`);
      } else {
        const delay = drops === 0 ? 0 : backoffDelay(drops - 1);
        drops += 1;
        this.log(
          `WebSocket closed (${describeClose(end.code, end.reason)}); reconnecting${delay === 0 ? '' : ` in ${(delay / 1000).toFixed(1)} s`}`,
        );
        await sleep(delay, stop);
      }
    }
    ready?.ws.close(1000, 'agent stopping'); // opened as the agent began to stop
    this.setLink('connecting');
  }

  private applyChannel(channel: ChannelResponse): void {
    this.lastBeatAt = Date.now(); // the server counts GET /agent/channel as a heartbeat
    this.outputInCompletion = channel.output_in_completion === true;
    this.cadence = {
      busyMs: cadenceSeconds(this.heartbeatMs / 1000, channel.heartbeat_seconds) * 1000,
      idleMs: cadenceSeconds(this.idlePingMs / 1000, channel.idle_ping_seconds) * 1000,
    };
    this.pollWaitNow = Math.max(1, Math.floor(cadenceSeconds(this.pollWait, channel.poll_wait_seconds)));
    this.replanHeartbeats();
    this.options.onChannel?.(channel);
  }

  get working(): boolean {
    return this.isBusy();
  }

  async channel(signal: AbortSignal): Promise<ChannelResponse> {
    const channel = await this.client.channel(signal);
    this.lastBeatAt = Date.now();
    return channel;
  }

  download(url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    return this.client.download(url, maxBytes, signal);
  }

  /** Opens a socket with the agent token; resolves once it is open, or with why it is not. */
  private openSocket(url: string): Promise<OpenedSocket | { error: string }> {
    const stop = this.stopController.signal;
    if (stop.aborted) return Promise.resolve({ error: 'the agent is stopping' });
    if (typeof globalThis.WebSocket !== 'function')
      return Promise.resolve({ error: 'this Node.js has no WebSocket (Node 22 or later needed)' });
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, {
        headers: {
          authorization: `Bearer ${this.client.currentToken ?? ''}`,
          [AGENT_INSTANCE_HEADER]: this.instance,
          [AGENT_VERSION_HEADER]: AGENT_VERSION,
        },
      });
    } catch (error) {
      return Promise.resolve({ error: (error as Error).message });
    }
    return new Promise((resolve) => {
      const done = (result: OpenedSocket | { error: string }) => {
        clearTimeout(timer);
        stop.removeEventListener('abort', onStop);
        ws.removeEventListener('open', onOpen);
        ws.removeEventListener('error', onError);
        ws.removeEventListener('close', onClose);
        if ('error' in result && ws.readyState !== WebSocket.CLOSED) ws.close();
        resolve(result);
      };
      const onOpen = () => done({ ws, url });
      // Node's WebSocket reports a refused handshake (non-101, e.g. a bad token or a proxy) only as an error event.
      const onError = (event: Event) =>
        done({ error: (event as Event & { message?: string }).message || 'the connection failed' });
      const onClose = (event: Event & { code: number; reason: string }) =>
        done({ error: `closed during the handshake, code ${event.code}` });
      const onStop = () => done({ error: 'the agent is stopping' });
      const timer = setTimeout(() => done({ error: 'the handshake timed out' }), SOCKET_OPEN_TIMEOUT_MS);
      ws.addEventListener('open', onOpen);
      ws.addEventListener('error', onError);
      ws.addEventListener('close', onClose);
      stop.addEventListener('abort', onStop, { once: true });
    });
  }

  /** Serves an open socket until it closes: drains at once and on every wake, heartbeats ride it. */
  private session({ ws, url }: OpenedSocket): Promise<SessionEnd> {
    const openedAt = Date.now();
    let replaced = false;
    let revoked = false;
    this.socket = ws;
    this.socketEverOpened = true;
    this.setLink('socket');
    this.log(`connected over WebSocket ${url}`);
    return new Promise((resolve) => {
      let closeTimer: NodeJS.Timeout | undefined;
      const finish = (code: number, reason: string) => {
        clearTimeout(closeTimer);
        ws.removeEventListener('message', onMessage);
        ws.removeEventListener('close', onClose);
        ws.removeEventListener('error', onError);
        if (this.socket === ws) {
          this.socket = undefined;
          this.endSession = undefined;
          this.setLink('connecting');
        }
        resolve({ code, reason, replaced, revoked, lastedMs: Date.now() - openedAt });
      };
      const onMessage = (event: MessageEvent) => {
        const message = parseServerMessage(event.data);
        switch (message.type) {
          case 'wake':
            void this.drainer.request();
            return;
          case 'command':
            // Claimed for this connection by the server: no claim request. A second push of a command this process
            // already handles (the server's periodic re-push of an unacknowledged one) is ignored.
            if (!this.busy.has(message.command.id)) void this.receive(message.command);
            return;
          case 'replaced':
            replaced = true;
            this.log(
              `another agent process connected with this target's token and replaced this connection; connecting again in ${minutes(this.replacedWaitMs)} (run one agent per target)`,
            );
            return;
          case 'revoked':
            revoked = true;
            this.log('the server revoked this connection (the target was deleted)');
            return;
          case 'error':
            this.log(`the server refused a message: ${message.code} ${message.message}`);
            return;
          case 'unknown':
            if (!this.unknownMessages.has(message.name)) {
              this.unknownMessages.add(message.name);
              this.log(`ignored a message of unknown type ${message.name} from the server`);
            }
        }
      };
      const onClose = (event: Event & { code: number; reason: string }) => finish(event.code, event.reason);
      // An error on an open socket is followed by a close; if that never comes, the socket is given up.
      const onError = () => {
        closeTimer ??= setTimeout(() => finish(1006, 'connection error'), SOCKET_CLOSE_TIMEOUT_MS);
      };
      this.endSession = (code, reason) => {
        closeTimer ??= setTimeout(() => finish(code, reason), SOCKET_CLOSE_TIMEOUT_MS);
        ws.close(code, reason);
      };
      ws.addEventListener('message', onMessage);
      ws.addEventListener('close', onClose);
      ws.addEventListener('error', onError);
      if (ws.readyState === WebSocket.CLOSING || ws.readyState === WebSocket.CLOSED) finish(1006, 'closed before use');
      else void this.drainer.request();
    });
  }

  /**
   * Long polling while the socket cannot be used: one log line, then the socket tried again every socketRetryMs.
   * Resolves with the socket once it opens (the poll loop ended after its current poll), or undefined on stop.
   */
  private async fallback(url: string, reason: string): Promise<OpenedSocket | undefined> {
    const stop = this.stopController.signal;
    const retryMs = this.socketEverOpened
      ? Math.min(this.socketRetryMs, this.socketRetryAfterOutageMs)
      : this.socketRetryMs;
    this.log(
      `WebSocket unavailable at ${url} (${reason}); falling back to HTTP long polling (GET /api/v1/agent/commands?wait=${this.pollWaitNow}); trying the WebSocket again in ${minutes(retryMs)}`,
    );
    this.setLink('polling');
    let polling = true;
    const loop = this.pollLoop(() => polling);
    try {
      while (!stop.aborted) {
        await sleep(retryMs, stop);
        if (stop.aborted) break;
        let channel: ChannelResponse;
        try {
          channel = await this.client.channel(stop);
        } catch {
          continue;
        }
        this.applyChannel(channel);
        if (channel.socket_url === null) continue;
        const opened = await this.openSocket(channel.socket_url);
        if ('error' in opened) continue;
        polling = false;
        await loop; // its current poll ends first: no poll and drain at once
        this.log(`WebSocket available again at ${opened.url}; stopped HTTP long polling`);
        return opened;
      }
      return undefined;
    } finally {
      polling = false;
      await loop;
    }
  }

  /**
   * GET /agent/commands?wait=0&max=<free slots>, again while an answer filled every slot asked for. With no free
   * slot it still asks once (max=0) for cancel notices, and a freed slot drains again.
   */
  private async drainOnce(): Promise<void> {
    const stop = this.stopController.signal;
    for (;;) {
      if (stop.aborted) return;
      const free = Math.max(0, this.concurrency - this.executions.size - this.queued.length);
      let answer;
      try {
        answer = await this.client.poll(0, free, stop);
      } catch (error) {
        if (error instanceof AbortedError) return;
        throw error;
      }
      for (const id of answer.cancel) this.cancel(id);
      for (const command of answer.commands) await this.receive(command);
      const filled = answer.commands.length >= free;
      this.inboxMayHoldMore = filled;
      if (!filled) return;
      if (this.concurrency - this.executions.size - this.queued.length <= 0) return; // a freed slot drains again
    }
  }

  private cancel(id: string): void {
    const running = this.executions.get(id);
    if (running !== undefined) {
      this.log(`cancelling ${id}: the server asked for it`);
      running.stop(CANCELLED_BY_SERVER);
      return;
    }
    const index = this.queued.findIndex((c) => c.id === id);
    if (index !== -1) {
      const [command] = this.queued.splice(index, 1);
      this.log(`cancelled ${id} before it started`);
      this.launch(command!, CANCELLED_BY_SERVER);
    }
  }

  private async receive(command: AgentCommand): Promise<void> {
    const id = command?.id;
    if (typeof id !== 'string' || !CommandStore.isSafeId(id)) {
      this.log(`ignored a command with an unusable id ${JSON.stringify(id)}`);
      return;
    }
    if (this.busy.has(id)) {
      // Delivered again while this process still handles it (for example while its completion is being sent):
      // looked at once that is done, so the server still gets its completion again.
      this.redelivered.set(id, command);
      return;
    }
    this.busy.add(id);
    let record: CommandRecord | undefined;
    try {
      record = await this.store.get(id);
    } catch (error) {
      this.log(`cannot read the record of ${id} (${(error as Error).message}); not running it`);
      this.busy.delete(id);
      return;
    }
    if (record !== undefined) {
      this.busy.delete(id);
      this.log(`${id} was delivered again; it already ran here, so it is not run again`);
      if (record.result !== undefined) this.resend({ ...record, status: 'completed' });
      return;
    }
    if (this.stopController.signal.aborted)
      this.launch(command, {
        exitCode: CANCEL_EXIT_CODE,
        message: 'Cancelled: the agent stopped before the command started',
      });
    else if (this.executions.size < this.concurrency) this.launch(command);
    else this.queued.push(command);
  }

  private launch(command: AgentCommand, stopBeforeStart?: { exitCode: number; message: string }): void {
    const execution = new CommandExecution(this.context, command);
    if (stopBeforeStart !== undefined) execution.stop(stopBeforeStart);
    if (stopBeforeStart === undefined) this.executions.set(command.id, execution);
    this.track(
      command.id,
      execution.run().finally(() => {
        this.executions.delete(command.id);
        this.slotFreed();
      }),
    );
  }

  private slotFreed(): void {
    while (this.queued.length > 0 && this.executions.size < this.concurrency && !this.stopController.signal.aborted) {
      this.launch(this.queued.shift()!);
    }
    // A poll waiting only for cancels (max=0) is cut short so that the next one can take work.
    if (this.pollMax === 0 && this.executions.size < this.concurrency) this.pollController?.abort();
    // Over the socket: the inbox may hold what did not fit when it was drained.
    if (this.link === 'socket' && this.inboxMayHoldMore && this.executions.size < this.concurrency) {
      this.inboxMayHoldMore = false;
      void this.drainer.request();
    }
  }

  stop(options: { graceSeconds?: number } = {}): Promise<void> {
    // Asked again without grace while waiting (a second Ctrl-C): running commands are killed now.
    if (this.stopping !== undefined && options.graceSeconds === 0) this.graceOver.abort();
    this.stopping ??= this.shutdown(options.graceSeconds ?? this.shutdownGraceSeconds);
    return this.stopping;
  }

  /**
   * A clean stop's last word, after every result was delivered: the server shows the target offline at once instead
   * of online for a minute and stale for five, and fails work given to it meanwhile saying it stopped. One attempt
   * of at most GOODBYE_TIMEOUT_MS: a stop never waits on an unreachable server.
   */
  private async sayGoodbye(): Promise<void> {
    try {
      await this.client.heartbeat([], AbortSignal.timeout(GOODBYE_TIMEOUT_MS), { stopping: true });
    } catch (error) {
      this.log(`could not say goodbye to the server (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  private async shutdown(graceSeconds: number): Promise<void> {
    this.log(
      this.executions.size === 0
        ? 'stopping'
        : `stopping: waiting up to ${graceSeconds} s for ${this.executions.size} running command(s) to finish`,
    );
    this.stopController.abort();
    if (this.pruneTimer !== undefined) clearInterval(this.pruneTimer);
    for (const command of this.queued.splice(0)) {
      this.launch(command, {
        exitCode: CANCEL_EXIT_CODE,
        message: 'Cancelled: the agent stopped before the command started',
      });
    }
    const executions = [...this.executions.values()];
    await Promise.race([
      Promise.all(executions.map((e) => e.ended)),
      sleep(graceSeconds * 1000, this.graceOver.signal),
    ]);
    this.graceOver.abort();
    const left = [...this.executions.values()].filter((e) => !e.processEnded);
    if (left.length > 0) {
      this.log(`killing ${left.length} command(s) still running after the grace period`);
      for (const execution of left) {
        execution.stop({
          exitCode: CANCEL_EXIT_CODE,
          message: 'Cancelled: the agent shut down before the command finished',
        });
      }
    }
    const deadline = setTimeout(() => this.deliveryController.abort(), this.killGraceMs + this.flushTimeoutMs);
    await Promise.all([...this.tasks]);
    clearTimeout(deadline);
    this.heartbeatController.abort();
    if (this.exitCode === 0) await this.sayGoodbye();
    this.endSession?.(1000, 'agent stopping');
    await Promise.all(this.loops);
    this.log(this.exitCode === 0 ? 'stopped' : 'stopped after an unrecoverable error');
    this.resolveExited(this.exitCode);
  }
}
