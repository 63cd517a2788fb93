// The commands this process handles: up to `concurrency` running, the rest queued, each tracked until its report is
// acknowledged. A command id runs at most once: one delivered again while this process still handles it is looked
// at again once that is done, and one that already ran here (its record on disk) only has its completion re-sent.
// At a stop, queued commands are reported cancelled and running ones get the grace period, then are killed.
import { sleep } from './backoff.js';
import { CANCELLED_BY_SERVER, CommandExecution, reportCompletion, type ExecutionContext } from './command.js';
import { CANCEL_EXIT_CODE, type StopReason } from './runner.js';
import { CommandStore, type CommandRecord } from './state.js';
import type { AgentCommand } from '../protocol/messages.js';

export interface WorkloadDeps {
  readonly context: ExecutionContext;
  readonly store: CommandStore;
  readonly concurrency: number;
  /** Aborted when the agent stops taking work. */
  readonly stopSignal: AbortSignal;
  readonly log: (message: string) => void;
  /** A command ended and left a slot free. */
  readonly onSlotFreed: () => void;
}

const STOPPED_BEFORE_START: StopReason = {
  exitCode: CANCEL_EXIT_CODE,
  message: 'Cancelled: the agent stopped before the command started',
};

export class Workload {
  private readonly executions = new Map<string, CommandExecution>();
  private readonly queued: AgentCommand[] = [];
  /** Command ids this process is handling right now (queued, running, or re-sending a completion). */
  private readonly handling = new Set<string>();
  /** Commands delivered again while this process still handled them: looked at again once it is done. */
  private readonly redelivered = new Map<string, AgentCommand>();
  private readonly tasks = new Set<Promise<void>>();

  constructor(private readonly deps: WorkloadDeps) {}

  /** Slots neither running nor promised to a queued command. */
  get freeSlots(): number {
    return Math.max(0, this.deps.concurrency - this.executions.size - this.queued.length);
  }

  get runningCount(): number {
    return this.executions.size;
  }

  /** Anything running, waiting, or still to be delivered. */
  get busy(): boolean {
    return this.executions.size > 0 || this.queued.length > 0 || this.tasks.size > 0;
  }

  runningIds(): string[] {
    return [...this.executions.keys()];
  }

  /** Whether this process handles `id` right now (a second push of it is ignored). */
  handles(id: string): boolean {
    return this.handling.has(id);
  }

  async receive(command: AgentCommand): Promise<void> {
    const { deps } = this;
    const id = command?.id;
    if (typeof id !== 'string' || !CommandStore.isSafeId(id)) {
      deps.log(`ignored a command with an unusable id ${JSON.stringify(id)}`);
      return;
    }
    if (this.handling.has(id)) {
      // Delivered again while this process still handles it (for example while its completion is being sent):
      // looked at once that is done, so the server still gets its completion again.
      this.redelivered.set(id, command);
      return;
    }
    this.handling.add(id);
    let record: CommandRecord | undefined;
    try {
      record = await deps.store.get(id);
    } catch (error) {
      deps.log(`cannot read the record of ${id} (${(error as Error).message}); not running it`);
      this.handling.delete(id);
      return;
    }
    if (record !== undefined) {
      this.handling.delete(id);
      deps.log(`${id} was delivered again; it already ran here, so it is not run again`);
      if (record.result !== undefined) this.resend({ ...record, status: 'completed' });
      return;
    }
    if (deps.stopSignal.aborted) this.launch(command, STOPPED_BEFORE_START);
    else if (this.executions.size < deps.concurrency) this.launch(command);
    else this.queued.push(command);
  }

  /** The server cancelled `id`: stopped if it runs, reported cancelled if it waits. */
  cancel(id: string): void {
    const running = this.executions.get(id);
    if (running !== undefined) {
      this.deps.log(`cancelling ${id}: the server asked for it`);
      running.stop(CANCELLED_BY_SERVER);
      return;
    }
    const index = this.queued.findIndex((c) => c.id === id);
    if (index !== -1) {
      const [command] = this.queued.splice(index, 1);
      this.deps.log(`cancelled ${id} before it started`);
      this.launch(command!, CANCELLED_BY_SERVER);
    }
  }

  /** Sends a recorded completion again until the server acknowledges it. */
  resend(record: CommandRecord): void {
    this.track(record.id, reportCompletion(this.deps.context, record));
  }

  /**
   * The stop: queued commands are reported cancelled, running ones get `graceSeconds` (cut short when `graceOver`
   * aborts), then those still running are killed. Resolves once no process is waited for any more.
   */
  async stopAll(graceSeconds: number, graceOver: AbortController): Promise<void> {
    for (const command of this.queued.splice(0)) this.launch(command, STOPPED_BEFORE_START);
    const executions = [...this.executions.values()];
    await Promise.race([Promise.all(executions.map((e) => e.ended)), sleep(graceSeconds * 1000, graceOver.signal)]);
    graceOver.abort();
    const left = [...this.executions.values()].filter((e) => !e.processEnded);
    if (left.length > 0) {
      this.deps.log(`killing ${left.length} command(s) still running after the grace period`);
      for (const execution of left) {
        execution.stop({
          exitCode: CANCEL_EXIT_CODE,
          message: 'Cancelled: the agent shut down before the command finished',
        });
      }
    }
  }

  /** Resolves when every command handled now is reported (or given up). */
  async settled(): Promise<void> {
    await Promise.all([...this.tasks]);
  }

  private launch(command: AgentCommand, stopBeforeStart?: StopReason): void {
    const execution = new CommandExecution(this.deps.context, command);
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
    const { deps } = this;
    while (this.queued.length > 0 && this.executions.size < deps.concurrency && !deps.stopSignal.aborted) {
      this.launch(this.queued.shift()!);
    }
    if (this.executions.size < deps.concurrency) deps.onSlotFreed();
  }

  private track(id: string, task: Promise<void>): void {
    this.handling.add(id);
    const tracked = task
      .catch((error: unknown) =>
        this.deps.log(`unexpected error with ${id}: ${(error as Error).stack ?? String(error)}`),
      )
      .finally(() => {
        this.handling.delete(id);
        this.tasks.delete(tracked);
        const again = this.redelivered.get(id);
        if (again !== undefined) {
          this.redelivered.delete(id);
          void this.receive(again);
        }
      });
    this.tasks.add(tracked);
  }
}
