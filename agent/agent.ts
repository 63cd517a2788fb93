// The agent: enrolls (or reuses its state file), keeps a WebSocket open to be woken when work is queued (or
// long-polls when it cannot), drains its inbox over HTTP, runs up to `concurrency` commands at once, stops commands
// the server cancels, and shuts down cleanly. Nothing connects to the host: every connection is one the agent makes.
// This file wires the rooms together and holds the agent's life: start, stop, and the fatal errors.
//
// startAgent -> enroll or load state (enrollment.ts) -> recover records of a previous run (recovery.ts)
//            -> heartbeat loop (heartbeat.ts) + channel loop (connection.ts; polling: inbox.ts's poll loop)
// work       -> claims and pushes (inbox.ts, connection.ts) -> slots and queue (workload.ts) -> one command from
//               record to acknowledged completion (command.ts)
// stop()     -> stop taking work -> commands finish within the grace period, else are killed -> deliveries
//               flushed -> goodbye -> socket closed (1000)
import { mkdir } from 'node:fs/promises';
import { AgentClient } from './client.js';
import type { ExecutionContext } from './command.js';
import { Connection } from './connection.js';
import { Enrollment } from './enrollment.js';
import { Heartbeats } from './heartbeat.js';
import { Inbox } from './inbox.js';
import { FIRST_BATCH_MS } from './output.js';
import { pruneRecords, recoverRecords, type RecordsDeps } from './recovery.js';
import { agentSettings, type AgentOptions, type AgentSettings } from './settings.js';
import { CommandStore, readOrCreateInstance } from './state.js';
import { AGENT_VERSION } from './version.js';
import { Workload } from './workload.js';
import { AGENT_INSTANCE_HEADER, AGENT_VERSION_HEADER } from '../protocol/headers.js';
import type { ChannelResponse } from '../protocol/messages.js';

export type { AgentOptions } from './settings.js';

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
const PRUNE_EVERY_MS = 6 * 3_600_000;

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

class Agent {
  readonly exited: Promise<number>;
  private resolveExited!: (code: number) => void;

  private readonly settings: AgentSettings;
  private readonly writeLine: (line: string) => void;
  private readonly client: AgentClient;
  private readonly store: CommandStore;
  private readonly enrollment: Enrollment;
  private readonly work: Workload;
  private readonly inbox: Inbox;
  private readonly heartbeats: Heartbeats;
  private readonly connection: Connection;
  private readonly records: RecordsDeps;

  private readonly stopController = new AbortController();
  private readonly deliveryController = new AbortController();
  private readonly heartbeatController = new AbortController();
  private readonly graceOver = new AbortController();
  /** The server takes a command's last output with its completion (GET /agent/channel said so). */
  private outputInCompletion = false;
  private instance = '';
  private loops: Promise<void>[] = [];
  private pruneTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private exitCode = 0;

  constructor(private readonly options: AgentOptions) {
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
    const settings = agentSettings(options);
    this.settings = settings;
    this.writeLine = options.log ?? ((line) => console.log(line));
    const log = (message: string) => this.log(message);
    const stopSignal = this.stopController.signal;
    this.client = new AgentClient({
      server: settings.server,
      fetch: options.fetch ?? globalThis.fetch,
      log,
      onUnauthorized: () => this.enrollment.unauthorized(),
      // No retry can change the versions: say why and stop with exit code 1 (a supervisor shows it, not a loop).
      onIncompatible: (message) => this.fatal(`The server refused this agent: ${message} Stopping.`),
      // A poll or completion the server answered was a heartbeat too: the next one comes a cadence after it.
      onSignOfLife: (heardAt) => this.heartbeats.heard(heardAt),
    });
    this.store = new CommandStore(settings.stateDir);
    const context: ExecutionContext = {
      client: this.client,
      store: this.store,
      workDir: settings.workDir,
      baseEnv: options.env ?? process.env,
      killGraceMs: settings.killGraceMs,
      log,
      deliverySignal: this.deliveryController.signal,
      outputInCompletion: () => this.outputInCompletion,
      batch: {
        firstBatchMs: options.firstBatchMs ?? FIRST_BATCH_MS,
        ...(options.batchIntervalMs === undefined ? {} : { intervalMs: options.batchIntervalMs }),
      },
    };
    this.enrollment = new Enrollment({
      client: this.client,
      options,
      server: settings.server,
      stateDir: settings.stateDir,
      log,
      fatal: (message) => this.fatal(message),
      // The open socket (if any) was the old target's: connect again with the new token.
      onReenrolled: () => this.connection.socket?.close(1000, 'enrolled again'),
    });
    const { concurrency } = settings;
    this.work = new Workload({
      context,
      store: this.store,
      concurrency,
      stopSignal,
      log,
      onSlotFreed: () => this.inbox.slotFreed(this.heartbeats.link === 'socket'),
    });
    this.inbox = new Inbox({
      client: this.client,
      work: this.work,
      stopSignal,
      log,
      pollWaitSeconds: settings.pollWaitSeconds,
    });
    this.heartbeats = new Heartbeats({
      client: this.client,
      log,
      busy: () => this.work.busy,
      running: () => this.work.runningIds(),
      socket: () => this.connection.socket,
      targetId: () => this.targetId,
      heartbeatMs: settings.heartbeatMs,
      idlePingMs: settings.idlePingMs,
    });
    this.connection = new Connection({
      client: this.client,
      settings,
      stopSignal,
      heartbeats: this.heartbeats,
      inbox: this.inbox,
      work: this.work,
      log,
      handshakeHeaders: () => ({
        authorization: `Bearer ${this.client.currentToken ?? ''}`,
        [AGENT_INSTANCE_HEADER]: this.instance,
        [AGENT_VERSION_HEADER]: AGENT_VERSION,
      }),
      onChannel: (channel) => this.applyChannel(channel),
    });
    this.records = {
      store: this.store,
      workDir: settings.workDir,
      killGraceMs: settings.killGraceMs,
      keepRecordsDays: settings.keepRecordsDays,
      log,
      resend: (record) => this.work.resend(record),
    };
  }

  get targetId(): string {
    return this.enrollment.targetId;
  }

  private log(message: string): void {
    this.writeLine(`${new Date().toISOString()} [${this.options.name}] ${message}`);
  }

  async start(): Promise<void> {
    const { stateDir, workDir, server, concurrency, transport } = this.settings;
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    await this.store.init();
    // Names this installation to the server: it pushes commands to its socket and hands back only to it the pushed
    // ones it has not acknowledged (this folder's records keep any id from running twice).
    this.instance = await readOrCreateInstance(stateDir);
    this.client.setInstance(this.instance);
    await this.enrollment.establish();
    if (this.options.enrollOnly === true) {
      this.resolveExited(0);
      return;
    }
    await recoverRecords(this.records);
    if (transport === 'polling') {
      this.heartbeats.setLink('polling');
      this.loops = [this.heartbeats.loop(this.heartbeatController.signal), this.inbox.pollLoop()];
    } else {
      this.loops = [this.heartbeats.loop(this.heartbeatController.signal), this.connection.loop()];
    }
    this.pruneTimer = setInterval(() => void pruneRecords(this.records), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
    this.log(
      `started: target ${this.targetId}, server ${server}, up to ${concurrency} command(s) at once, working in ${workDir}, transport ${transport}`,
    );
  }

  /** A channel answer (GET /agent/channel, also a heartbeat): the server's cadence, poll wait and output rule. */
  private applyChannel(channel: ChannelResponse): void {
    this.heartbeats.adopt(channel);
    this.outputInCompletion = channel.output_in_completion === true;
    this.inbox.adopt(channel);
    this.heartbeats.planAgain();
    this.options.onChannel?.(channel);
  }

  get working(): boolean {
    return this.work.busy;
  }

  async channel(signal: AbortSignal): Promise<ChannelResponse> {
    const channel = await this.client.channel(signal);
    this.heartbeats.heard();
    return channel;
  }

  download(url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    return this.client.download(url, maxBytes, signal);
  }

  stop(options: { graceSeconds?: number } = {}): Promise<void> {
    // Asked again without grace while waiting (a second Ctrl-C): running commands are killed now.
    if (this.stopping !== undefined && options.graceSeconds === 0) this.graceOver.abort();
    this.stopping ??= this.shutdown(options.graceSeconds ?? this.settings.shutdownGraceSeconds);
    return this.stopping;
  }

  private fatal(message: string): void {
    if (this.stopping !== undefined && this.exitCode === 1) return;
    this.log(message);
    this.exitCode = 1;
    this.deliveryController.abort(); // nothing can be delivered any more
    void this.stop({ graceSeconds: 0 });
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
    const running = this.work.runningCount;
    this.log(
      running === 0
        ? 'stopping'
        : `stopping: waiting up to ${graceSeconds} s for ${running} running command(s) to finish`,
    );
    this.stopController.abort();
    if (this.pruneTimer !== undefined) clearInterval(this.pruneTimer);
    await this.work.stopAll(graceSeconds, this.graceOver);
    const { killGraceMs, flushTimeoutMs } = this.settings;
    const deadline = setTimeout(() => this.deliveryController.abort(), killGraceMs + flushTimeoutMs);
    await this.work.settled();
    clearTimeout(deadline);
    this.heartbeatController.abort();
    if (this.exitCode === 0) await this.sayGoodbye();
    this.connection.end(1000, 'agent stopping');
    await Promise.all(this.loops);
    this.log(this.exitCode === 0 ? 'stopped' : 'stopped after an unrecoverable error');
    this.resolveExited(this.exitCode);
  }
}
