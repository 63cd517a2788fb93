// Following a deployment for `deploy --wait`, `redeploy --wait`, `wait` and `logs --follow`: log lines as they come
// (stdout; stderr with --output json), the progress line on a terminal, the outcome as the exit code.
import type { Context } from './command.js';
import { exitCodeOfState, TimeoutError } from './errors.js';
import { followDeployment, type Deployment } from './follow.js';
import { progressLine, renderEvent, summary, trackProgress, type ProgressState } from './render.js';

export interface WatchOptions {
  /** Print the log lines (not for `wait`). */
  readonly logs: boolean;
  /** --timeout, in milliseconds. */
  readonly timeoutMs?: number;
  /** The --timeout text as given, for the message. */
  readonly timeoutText?: string;
}

/** Runs `work` with an abort signal that fires after `timeoutMs`; a TimeoutError then. */
export const withTimeout = async <T>(
  timeoutMs: number | undefined,
  message: () => string,
  work: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> => {
  if (timeoutMs === undefined) return work(undefined);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimeoutError(message())), timeoutMs);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
  }
};

export const timeoutMessage = (id: string, text: string | undefined, what = 'deployment') =>
  `--timeout ${text ?? ''} elapsed: ${what} ${id} keeps running (deployer wait ${id} to follow it again)`;

/** Follows deployment `id` to its end; prints the outcome; answers the exit code. */
export const watchDeployment = async (ctx: Context, id: string, options: WatchOptions): Promise<number> => {
  const api = await ctx.api();
  const { io } = ctx;
  const showProgress = !ctx.json && io.stderrTty && io.stdoutTty;
  const logStyle = ctx.json ? ctx.err : ctx.out;
  const writeLog = ctx.json ? io.stderr : io.stdout;
  const progress: ProgressState = { completed: 0, failed: 0, total: 0, running: 0 };
  let drawn = false;
  const clear = () => {
    if (drawn) io.stderr('\r\x1b[2K');
    drawn = false;
  };
  const draw = () => {
    if (!showProgress) return;
    clear();
    io.stderr(progressLine(ctx.err, progress, id.slice(0, 8)));
    drawn = true;
  };
  if (showProgress) {
    const now = await api.get<Deployment>(`/deployments/${encodeURIComponent(id)}`);
    progress.total = Number(now['total_steps'] ?? 0);
    progress.failed = Number(now['failed_steps'] ?? 0);
    progress.completed = Math.max(0, Number(now['completed_steps'] ?? 0) - progress.failed);
  }
  let final: Deployment;
  try {
    final = await withTimeout(
      options.timeoutMs,
      () => timeoutMessage(id, options.timeoutText),
      (signal) =>
        followDeployment(api, id, {
          signal,
          onEvent: (event) => {
            const changed = trackProgress(progress, event);
            if (options.logs) {
              const lines = renderEvent(logStyle, event);
              if (lines.length > 0) {
                clear();
                writeLog(lines.map((line) => `${line}\n`).join(''));
              }
            }
            if (changed || drawn === false) draw();
          },
          onReconnect: (lastEventId, waitMs) => {
            clear();
            io.stderr(`deployer: the log stream dropped; resuming after event ${lastEventId ?? 0} in ${waitMs} ms\n`);
          },
        }),
    );
  } finally {
    clear();
  }
  ctx.note(summary(ctx.err, final));
  if (ctx.json) ctx.print(JSON.stringify(final, null, 2));
  return exitCodeOfState(final.state);
};
