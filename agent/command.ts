// One command from receipt to acknowledged completion:
// record it (before anything runs) -> run it in <work-dir>/<id> -> stream masked output -> record the result ->
// report it. Output is sent before the completion; a completion the server has not acknowledged stays recorded
// and is sent again by the next start.
import { StringDecoder } from 'node:string_decoder';
import { join } from 'node:path';
import { AbortedError, HttpError, type AgentClient } from './client.js';
import { commandEnv, REFUSED_EXIT_CODE, refusedVariable } from './environment.js';
import { OutputBatcher, SecretMasker, type BatcherOptions } from './output.js';
import type { AgentCommand, CompleteRequest, OutputChunk, OutputStream } from '../protocol/messages.js';
import {
  CANCEL_EXIT_CODE,
  processStartTime,
  startProcess,
  type RunResult,
  type RunningProcess,
  type StopReason,
} from './runner.js';
import type { CommandRecord, CommandStore } from './state.js';

export interface ExecutionContext {
  readonly client: AgentClient;
  readonly store: CommandStore;
  readonly workDir: string;
  /** The environment commands start from (agent-internal variables are removed from it). */
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly killGraceMs: number;
  readonly log: (message: string) => void;
  /** Aborts the retries of output and completions: the agent stops waiting for the server. */
  readonly deliverySignal: AbortSignal;
  readonly batch?: BatcherOptions;
  /** Whether the server takes a command's last output with its completion (it said so at GET /agent/channel). */
  readonly outputInCompletion?: () => boolean;
}

export const CANCELLED_BY_SERVER: StopReason = { exitCode: CANCEL_EXIT_CODE, message: 'Cancelled by the server' };
/** Exit code reported for a command the agent lost track of (it restarted while the command ran). */
export const LOST_EXIT_CODE = -1;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/**
 * Sends a recorded completion until the server acknowledges it (409: it already has one; 404: the command is not
 * ours any more), then marks the record reported. Leaves it `completed` when the agent stops waiting.
 */
export const reportCompletion = async (context: ExecutionContext, record: CommandRecord): Promise<void> => {
  if (record.result === undefined) return;
  try {
    await context.client.complete(record.id, record.result, context.deliverySignal);
  } catch (error) {
    if (error instanceof HttpError && error.status === 409) {
      // already completed: done
    } else if (error instanceof HttpError && error.status === 404) {
      context.log(`dropped the completion of ${record.id}: the server does not know this command (any more)`);
    } else if (error instanceof AbortedError) {
      context.log(`the completion of ${record.id} was not acknowledged; it will be sent again at the next start`);
      return;
    } else {
      context.log(`could not report the completion of ${record.id}: ${(error as Error).message}`);
      if (error instanceof HttpError && error.status === 401) return;
    }
  }
  await context.store.save({ ...record, status: 'reported', updated_at: new Date().toISOString() });
};

export class CommandExecution {
  private process: RunningProcess | undefined;
  private stopReason: StopReason | undefined;
  /** The server will not take this command's reports any more (404), or the agent is no longer enrolled (401). */
  private gone: string | undefined;
  private markEnded!: () => void;
  /** Resolves when the command's processes are over (its reports may still be on their way). */
  readonly ended = new Promise<void>((resolve) => (this.markEnded = resolve));
  private isEnded = false;

  constructor(
    private readonly context: ExecutionContext,
    readonly command: AgentCommand,
  ) {}

  get id(): string {
    return this.command.id;
  }

  get processEnded(): boolean {
    return this.isEnded;
  }

  private end(): void {
    this.isEnded = true;
    this.markEnded();
  }

  /** Stops the command (at once if it runs, or before it starts). The first reason wins. */
  stop(reason: StopReason): void {
    this.stopReason ??= reason;
    this.process?.stop(this.stopReason);
  }

  /** Runs the command to its reported end. Never rejects. */
  async run(): Promise<void> {
    try {
      await this.runToReport();
    } finally {
      this.end();
    }
  }

  private async runToReport(): Promise<void> {
    const { context, command } = this;
    const startedAt = new Date();
    const record: CommandRecord = {
      id: command.id,
      status: 'started',
      deployment_id: command.deployment_id,
      started_at: startedAt.toISOString(),
      updated_at: startedAt.toISOString(),
    };
    try {
      await context.store.save(record);
    } catch (error) {
      // Without the record the agent could run it twice after a restart: it does not run it at all.
      context.log(`cannot record ${command.id} in the state directory (${(error as Error).message}); not running it`);
      this.end();
      await this.finish(
        record,
        {
          exitCode: LOST_EXIT_CODE,
          errorMessage: `The agent could not record the command: ${(error as Error).message}`,
        },
        startedAt,
      );
      return;
    }
    const refused = refusedVariable(command.variables);
    if (refused !== undefined) {
      // An old server or a tampered record: nothing runs with an environment that changes how a program starts.
      context.log(`refused ${command.id}: variable '${refused.name}' is not allowed in a command's environment`);
      this.end();
      await this.finish(record, { exitCode: REFUSED_EXIT_CODE, errorMessage: refused.message }, startedAt);
      return;
    }
    // Output leaves only once the process group is on record: a server that has seen output knows that a restart of
    // this agent can find and end what the command left running (before that, a kill loses the group's id).
    let recorded!: () => void;
    const groupRecorded = new Promise<void>((resolve) => (recorded = resolve));
    const batcher = new OutputBatcher(async (chunks) => {
      await groupRecorded;
      await this.sendOutput(chunks);
    }, context.batch);
    const result =
      this.stopReason !== undefined
        ? { exitCode: this.stopReason.exitCode, errorMessage: this.stopReason.message }
        : await this.execute(batcher, record, recorded).finally(recorded);
    this.end();
    // What is left of the output rides the completion when the server takes it so and it fits one request.
    const tail = context.outputInCompletion?.() === true ? await batcher.takeRest() : (await batcher.flush(), []);
    if (batcher.droppedChunks > 0 && this.gone === undefined)
      context.log(`${batcher.droppedChunks} output chunk(s) of ${command.id} could not be delivered`);
    await this.finish(record, result, startedAt, tail);
  }

  private async execute(batcher: OutputBatcher, record: CommandRecord, recorded: () => void): Promise<RunResult> {
    const { context, command } = this;
    const secrets = (command.secret_variables ?? [])
      .map((name) =>
        command.variables !== undefined && Object.hasOwn(command.variables, name) ? command.variables[name] : undefined,
      )
      .filter((v): v is string => typeof v === 'string');
    const streams = new Map<OutputStream, { decoder: StringDecoder; masker: SecretMasker }>([
      ['stdout', { decoder: new StringDecoder('utf8'), masker: new SecretMasker(secrets) }],
      ['stderr', { decoder: new StringDecoder('utf8'), masker: new SecretMasker(secrets) }],
    ]);
    const timeout = command.timeout_seconds ?? null;
    context.log(
      `running ${command.id} (deploy ${command.deployment_id}, action ${command.action?.slug}@${command.action?.version}, ${command.interpreter}, ` +
        `${timeout === null ? 'no timeout' : `timeout ${timeout}s`})`,
    );
    this.process = await startProcess({
      interpreter: command.interpreter,
      script: command.script,
      cwd: join(context.workDir, command.id),
      env: commandEnv(context.baseEnv, command, context.log),
      timeoutSeconds: timeout,
      killGraceMs: context.killGraceMs,
      onOutput: (stream, data) => {
        const { decoder, masker } = streams.get(stream)!;
        batcher.append(stream, masker.push(decoder.write(data)));
      },
    });
    batcher.start(); // before any output can arrive: a short command's output rides its completion
    if (this.stopReason !== undefined) this.process.stop(this.stopReason);
    const pid = this.process.pid;
    // If the agent dies now, its next run finds the group by this and ends it (recovery.ts). The command's end
    // does not wait for this write, but its result is recorded only after it.
    const startTime = pid === undefined ? undefined : processStartTime(pid);
    const pidRecorded =
      pid === undefined
        ? Promise.resolve()
        : context.store
            .save({
              ...record,
              pid,
              ...(startTime === undefined ? {} : { pid_start_time: startTime }),
              updated_at: new Date().toISOString(),
            })
            .catch((error: Error) => context.log(`could not record the process of ${command.id}: ${error.message}`));
    void pidRecorded.then(recorded);
    const result = await this.process.done;
    batcher.end(); // what waits now rides the completion instead of a request of its own
    for (const [stream, { decoder, masker }] of streams)
      batcher.append(stream, masker.push(decoder.end()) + masker.end());
    await pidRecorded;
    if (result.leftovers === true) context.log(`${command.id} left processes behind; they were killed`);
    return result;
  }

  private async sendOutput(chunks: OutputChunk[]): Promise<void> {
    try {
      const answer = await this.context.client.output(this.command.id, chunks, this.context.deliverySignal);
      if (answer.cancel_requested === true) this.requestCancel();
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) {
        this.gone = 'the server does not know this command (any more)';
        this.stop({ exitCode: CANCEL_EXIT_CODE, message: 'The server no longer knows this command' });
      } else if (error instanceof HttpError && error.status === 409) {
        // The command is over on the server's side (completed or cancelled): it takes no more output.
        this.context.log(`the server takes no more output for ${this.command.id} (${error.message}); stopping it`);
        this.stop(CANCELLED_BY_SERVER);
      } else if (error instanceof HttpError && error.status === 401) {
        this.gone = 'the agent is no longer enrolled';
        this.stop({ exitCode: CANCEL_EXIT_CODE, message: 'The agent is no longer enrolled' });
      } else if (!(error instanceof AbortedError)) {
        this.context.log(`the server refused output of ${this.command.id}: ${(error as Error).message}`);
      }
      throw error;
    }
  }

  private requestCancel(): void {
    if (this.stopReason !== undefined) return;
    this.context.log(`cancelling ${this.command.id}: the server asked for it`);
    this.stop(CANCELLED_BY_SERVER);
  }

  private async finish(
    record: CommandRecord,
    result: RunResult,
    startedAt: Date,
    output: readonly OutputChunk[] = [],
  ): Promise<void> {
    const { context } = this;
    const completedAt = new Date();
    const report: CompleteRequest = {
      exit_code: result.exitCode,
      started_at: startedAt.toISOString(),
      completed_at: completedAt.toISOString(),
      ...(result.errorMessage === undefined ? {} : { error_message: result.errorMessage }),
      ...(output.length === 0 ? {} : { output }),
    };
    const suffix = result.errorMessage === undefined ? '' : ` (${result.errorMessage})`;
    context.log(
      `finished ${record.id}: exit ${result.exitCode} in ${seconds(completedAt.getTime() - startedAt.getTime())}${suffix}`,
    );
    const completed: CommandRecord = {
      ...record,
      status: 'completed',
      result: report,
      updated_at: completedAt.toISOString(),
    };
    if (this.gone !== undefined) {
      context.log(`dropped ${record.id}: ${this.gone}`);
      await context.store.save({ ...completed, status: 'reported' }).catch(() => undefined);
      return;
    }
    try {
      await context.store.save(completed);
    } catch (error) {
      context.log(`cannot record the result of ${record.id} (${(error as Error).message})`);
    }
    await reportCompletion(context, completed).catch((error: unknown) =>
      context.log(`cannot record ${record.id} as reported (${(error as Error).message})`),
    );
  }
}
