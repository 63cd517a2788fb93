// The agent: enrolls (or reuses its state file), heartbeats, long-polls for commands and runs up to `concurrency`
// of them at once, stops commands the server cancels, and shuts down cleanly. Nothing connects to the host: every
// exchange is a request the agent makes.
//
// startAgent -> enroll or load state -> recover records of a previous run -> heartbeat loop + poll loop
// stop()     -> stop polling -> commands finish within the grace period, else are killed -> deliveries flushed
import { mkdir } from 'node:fs/promises';
import { arch, hostname, platform, release } from 'node:os';
import { join, resolve } from 'node:path';
import { backoffDelay, sleep } from './backoff.js';
import { AbortedError, AgentClient, HttpError, UnavailableError } from './client.js';
import {
  CANCELLED_BY_SERVER,
  CommandExecution,
  LOST_EXIT_CODE,
  reportCompletion,
  type ExecutionContext,
} from './command.js';
import type { AgentCommand, Tag } from './protocol.js';
import { CANCEL_EXIT_CODE, endLostGroup } from './runner.js';
import { CommandStore, normalizeServer, readState, writeState, type AgentState, type CommandRecord } from './state.js';
import { AGENT_VERSION } from './version.js';

export interface AgentOptions {
  readonly server: string;
  readonly name: string;
  readonly tags?: readonly Tag[];
  /** Used when there is no state file yet (or it is for another server), and once more if the token is refused. */
  readonly enrollToken?: string;
  readonly stateDir: string;
  /** Where commands run, each in `<work-dir>/<command id>`; default `<state-dir>/work`. */
  readonly workDir?: string;
  readonly concurrency?: number;
  readonly heartbeatSeconds?: number;
  readonly pollWaitSeconds?: number;
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
  /** Output batching (tests). */
  readonly batchIntervalMs?: number;
}

export interface RunningAgent {
  /** The target this agent acts for (a new one after it had to enroll again). */
  readonly targetId: string;
  /** Stops polling, lets running commands finish within the grace period, kills the rest, flushes reports. */
  stop(options?: { graceSeconds?: number }): Promise<void>;
  /** Resolves with the exit code once the agent has stopped: 0 after stop(), 1 when it could not go on. */
  readonly exited: Promise<number>;
}

export const DEFAULTS = {
  concurrency: 4,
  heartbeatSeconds: 15,
  pollWaitSeconds: 20,
  killGraceSeconds: 5,
  shutdownGraceSeconds: 30,
  flushTimeoutSeconds: 10,
  connectTimeoutSeconds: 60,
  keepRecordsDays: 7,
} as const;

const PRUNE_EVERY_MS = 6 * 3_600_000;

/** Enrolls or reuses the state file, then runs until stop(). Rejects with a clear Error when enrollment fails. */
export const startAgent = async (options: AgentOptions): Promise<RunningAgent> => {
  const agent = new Agent(options);
  await agent.start();
  return {
    get targetId() {
      return agent.targetId; // changes if the agent had to enroll again
    },
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
  private readonly pollWait: number;
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
  private loops: Promise<void>[] = [];
  private pruneTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private exitCode = 0;
  private reenrolling: Promise<void> | undefined;
  private reenrolled = false;

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
    this.pollWait = positive('pollWaitSeconds', options.pollWaitSeconds, DEFAULTS.pollWaitSeconds, { integer: true });
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
      ...(options.batchIntervalMs === undefined ? {} : { batch: { intervalMs: options.batchIntervalMs } }),
    };
  }

  private log(message: string): void {
    this.writeLine(`${new Date().toISOString()} [${this.options.name}] ${message}`);
  }

  async start(): Promise<void> {
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    await mkdir(this.workDir, { recursive: true, mode: 0o700 });
    await this.store.init();
    const state = await readState(this.stateDir);
    if (state !== undefined && normalizeServer(state.server) === this.server) {
      this.use(state);
      this.log(`using the enrollment in ${this.stateDir} (target ${state.target_id})`);
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
    await this.recover();
    this.loops = [this.heartbeatLoop(), this.pollLoop()];
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
    this.log(
      `started: target ${this.targetId}, server ${this.server}, up to ${this.concurrency} command(s) at once, working in ${this.workDir}`,
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
    this.log(
      `enrolled with ${this.server} as target ${state.target_id} (tags ${tags.map((t) => `${t.key}=${t.value}`).join(', ') || 'none'})`,
    );
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

  private async heartbeatLoop(): Promise<void> {
    const signal = this.heartbeatController.signal;
    while (!signal.aborted) {
      try {
        await this.client.heartbeat([...this.executions.keys()], signal);
      } catch (error) {
        if (error instanceof HttpError) this.log(`heartbeat refused: ${error.status} ${error.message}`);
        // unreachable: the client logged the outage once; the next tick tries again
      }
      await sleep(this.heartbeatMs, signal);
    }
  }

  private async pollLoop(): Promise<void> {
    const stop = this.stopController.signal;
    let refusals = 0;
    while (!stop.aborted) {
      const free = Math.max(0, this.concurrency - this.executions.size - this.queued.length);
      const controller = new AbortController();
      this.pollController = controller;
      this.pollMax = free;
      const started = Date.now();
      let answer;
      try {
        answer = await this.client.poll(this.pollWait, free, AbortSignal.any([stop, controller.signal]));
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
  }

  stop(options: { graceSeconds?: number } = {}): Promise<void> {
    // Asked again without grace while waiting (a second Ctrl-C): running commands are killed now.
    if (this.stopping !== undefined && options.graceSeconds === 0) this.graceOver.abort();
    this.stopping ??= this.shutdown(options.graceSeconds ?? this.shutdownGraceSeconds);
    return this.stopping;
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
    await Promise.all(this.loops);
    this.log(this.exitCode === 0 ? 'stopped' : 'stopped after an unrecoverable error');
    this.resolveExited(this.exitCode);
  }
}
