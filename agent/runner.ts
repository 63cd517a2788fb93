// One command's process: the script written to a file in the command's own directory and run by its interpreter,
// in a process group of its own so that a timeout, a cancel or the end of the command takes every process it
// started with it (TERM to the group, KILL after a grace period).
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Interpreter, OutputStream } from '../protocol/messages.js';

const SCRIPT_FILES: Record<Interpreter, string> = {
  sh: 'script.sh',
  bash: 'script.sh',
  node: 'script.js',
  python3: 'script.py',
};

export interface RunSpec {
  readonly interpreter: string;
  readonly script: string;
  /** The command's own directory; created if missing. */
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutSeconds: number | null;
  /** How long the group has between TERM and KILL. */
  readonly killGraceMs: number;
  readonly onOutput: (stream: OutputStream, data: Buffer) => void;
}

export interface RunResult {
  readonly exitCode: number;
  readonly errorMessage?: string;
  /** Processes of the group were still alive when the script ended, and were killed. */
  readonly leftovers?: boolean;
}

/** Why the agent stopped a command, and what it reports for it. */
export interface StopReason {
  readonly exitCode: number;
  readonly message: string;
}

export interface RunningProcess {
  readonly pid: number | undefined;
  readonly done: Promise<RunResult>;
  /** Kills the process group; the first reason wins. */
  stop(reason: StopReason): void;
}

export const TIMEOUT_EXIT_CODE = 124;
export const CANCEL_EXIT_CODE = 130;
export const NOT_FOUND_EXIT_CODE = 127;
export const CANNOT_RUN_EXIT_CODE = 126;

export const isInterpreter = (value: string): value is Interpreter => Object.hasOwn(SCRIPT_FILES, value);

/** Members of a process group that still run, read from /proc; undefined where there is no /proc. */
const liveMembers = (pgid: number): number | undefined => {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  let live = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') live += 1;
  }
  return live;
};

/**
 * True while the group has a running process. A zombie does not count: an orphan is reaped by init, which in some
 * containers takes its time, and a dead process holds nothing.
 */
const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return (liveMembers(pid) ?? 1) > 0;
};

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
};

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the group has no process left, at most `ms`; true when it is gone. */
const groupGone = async (pid: number, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (groupAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await wait(50);
  }
  return true;
};

/** When a process started (clock ticks since boot, /proc/<pid>/stat field 22); undefined if gone or no /proc. */
export const processStartTime = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)": state is field 3, so starttime (field 22) is the 20th after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
};

/**
 * Ends the process group of a command an earlier run of the agent started and lost (the agent was killed while it
 * ran). Only when the group is provably that command's: its leader still runs with the recorded start time, or
 * the leader is gone but the group lives on (Linux never gives a new process the id of a group that still
 * exists). Without /proc nothing can be proved and nothing is killed. Answers what it did.
 */
export const endLostGroup = async (
  pid: number,
  startTime: string | undefined,
  graceMs: number,
): Promise<'ended' | 'gone' | 'not-ours' | 'unknown'> => {
  if (liveMembers(pid) === undefined) return 'unknown';
  if (!groupAlive(pid)) return 'gone';
  const leaderStart = processStartTime(pid);
  if (leaderStart !== undefined && (startTime === undefined || leaderStart !== startTime)) return 'not-ours';
  await killGroup(pid, graceMs);
  return 'ended';
};

/** TERM to the whole group, KILL after the grace period to whatever is left; resolves when the group is gone. */
export const killGroup = async (pid: number, graceMs: number): Promise<void> => {
  signalGroup(pid, 'SIGTERM');
  if (await groupGone(pid, graceMs)) return;
  signalGroup(pid, 'SIGKILL');
  await groupGone(pid, 2_000);
};

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number => {
  if (code !== null) return code;
  const number = signal === null ? undefined : (osConstants.signals as Record<string, number>)[signal];
  return number === undefined ? 1 : 128 + number;
};

/** Writes the script and starts it. Never rejects: failures to start are results (127, 126). */
export const startProcess = async (spec: RunSpec): Promise<RunningProcess> => {
  if (!isInterpreter(spec.interpreter)) {
    return finished({
      exitCode: NOT_FOUND_EXIT_CODE,
      errorMessage: `Unsupported interpreter '${spec.interpreter}' (sh, bash, node or python3)`,
    });
  }
  const file = SCRIPT_FILES[spec.interpreter];
  try {
    await mkdir(spec.cwd, { recursive: true, mode: 0o700 });
    await writeFile(join(spec.cwd, file), spec.script, { mode: 0o700 });
    // A package.json without "type": Node treats script.js as CommonJS, or as an ES module when it uses import/export.
    if (spec.interpreter === 'node') await writeFile(join(spec.cwd, 'package.json'), '{}\n', { mode: 0o600 });
  } catch (error) {
    return finished({
      exitCode: CANNOT_RUN_EXIT_CODE,
      errorMessage: `Could not write the script to ${spec.cwd}: ${(error as Error).message}`,
    });
  }

  let child;
  try {
    child = spawn(spec.interpreter, [file], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    return finished({
      exitCode: CANNOT_RUN_EXIT_CODE,
      errorMessage: `Could not start ${spec.interpreter}: ${(error as Error).message}`,
    });
  }
  const pid = child.pid;
  let stopReason: StopReason | undefined;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let killing: Promise<void> | undefined;
  let leftovers = false;
  let timer: NodeJS.Timeout | undefined;

  const done = new Promise<RunResult>((resolve) => {
    let settled = false;
    const settle = (result: RunResult) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      resolve(result);
    };
    child.stdout.on('data', (data: Buffer) => spec.onOutput('stdout', data));
    child.stderr.on('data', (data: Buffer) => spec.onOutput('stderr', data));
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (pid !== undefined) return; // an error after a successful start is not a start failure
      const missing = error.code === 'ENOENT';
      settle({
        exitCode: missing ? NOT_FOUND_EXIT_CODE : CANNOT_RUN_EXIT_CODE,
        errorMessage: missing
          ? `The interpreter '${spec.interpreter}' was not found on this host`
          : `Could not start ${spec.interpreter}: ${error.message}`,
      });
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      if (timer !== undefined) clearTimeout(timer);
      // Processes the script left behind end with it (and release the output pipes they may hold).
      if (pid !== undefined && stopReason === undefined && groupAlive(pid)) {
        leftovers = true;
        killing = killGroup(pid, spec.killGraceMs);
      }
    });
    child.once('close', async (code, signal) => {
      if (pid === undefined) return;
      const ended = exit ?? { code, signal };
      if (killing === undefined && groupAlive(pid)) {
        leftovers = stopReason === undefined;
        killing = killGroup(pid, spec.killGraceMs);
      }
      await killing;
      if (stopReason !== undefined) settle({ exitCode: stopReason.exitCode, errorMessage: stopReason.message });
      else settle({ exitCode: exitCodeOf(ended.code, ended.signal), ...(leftovers ? { leftovers } : {}) });
    });
  });

  const stop = (reason: StopReason) => {
    // Once the script itself has ended, its result stands (leftovers are being killed anyway).
    if (stopReason !== undefined || exit !== undefined || pid === undefined) return;
    stopReason = reason;
    killing = killGroup(pid, spec.killGraceMs);
  };
  if (spec.timeoutSeconds !== null && spec.timeoutSeconds > 0 && pid !== undefined) {
    const seconds = spec.timeoutSeconds;
    timer = setTimeout(
      () =>
        stop({ exitCode: TIMEOUT_EXIT_CODE, message: `Timed out after ${seconds} s; the process group was killed` }),
      seconds * 1000,
    );
  }
  return { pid, done, stop };
};

const finished = (result: RunResult): RunningProcess => ({
  pid: undefined,
  done: Promise.resolve(result),
  stop: () => undefined,
});
