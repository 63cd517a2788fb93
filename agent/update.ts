// --auto-update: the agent keeps itself at the build its server ships. On start, every N minutes and on every channel
// answer, it looks at the channel's `release`; one newer than itself within the accepted range (the same major
// version) is downloaded from its own server with its agent token, checked against the SHA-256 of the channel's
// (authenticated) answer, and written over the agent's own file (a temporary file beside it, then a rename; the
// mode kept). Then the agent waits until no command runs, stops taking work (a clean stop: results delivered,
// goodbye said) and restarts as the new build (restart() below). A checksum that does not match is logged and the
// old build keeps running; that release is not tried again by this process.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { RunningAgent } from './agent.js';
import semverCompare from 'semver/functions/compare.js';
import semverParse from 'semver/functions/parse.js';
import semverSatisfies from 'semver/functions/satisfies.js';
import type { AgentReleaseInfo } from '../protocol/messages.js';

/** The exit code of an agent that installed an update and wants to be started again (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75;

/** A bundle larger than this is not taken (today's is about 50 KB). */
const MAX_BUNDLE_BYTES = 50 * 1024 * 1024;

/**
 * Why the agent of version `own` does not take `release`, or undefined when it does: it must be newer, of the same
 * major version (a new major needs a new server too), and within the server's accepted range when it names one.
 */
export const updateRefusal = (own: string, release: string, accepted?: string): string | undefined => {
  const mine = semverParse(own);
  const theirs = semverParse(release);
  if (mine === null || theirs === null) return `${release} is not a version this agent can compare`;
  if (semverCompare(theirs, mine) <= 0) return `${release} is not newer than ${own}`;
  if (theirs.major !== mine.major) return `${release} is of another major version than ${own}`;
  // An unreadable range accepts nothing (semver's satisfies answers false for it).
  if (accepted !== undefined && !semverSatisfies(theirs, accepted, { includePrerelease: true }))
    return `${release} is not among the versions the server accepts (${accepted})`;
  return undefined;
};

export interface UpdaterOptions {
  readonly agent: Pick<RunningAgent, 'busy' | 'channel' | 'download' | 'stop'>;
  /** The running build's version. */
  readonly version: string;
  /** The file the agent runs from (the one-file bundle): replaced by the update. */
  readonly file: string;
  readonly everyMs: number;
  readonly log: (message: string) => void;
  /** How often to look whether the agent is idle again while an update waits. */
  readonly idleCheckMs?: number;
}

export interface Updater {
  /** A channel answer: its release is installed when it is newer. */
  consider(release: AgentReleaseInfo | null | undefined, accepted?: string): void;
  /** Asks the server for its channel (and so its release) now. */
  check(): Promise<void>;
  /** The version installed over the file, once the agent stopped to restart as it; undefined otherwise. */
  readonly installed: string | undefined;
  dispose(): void;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export const startUpdater = (options: UpdaterOptions): Updater => {
  const { agent, log } = options;
  let working: Promise<void> | undefined;
  let installed: string | undefined;
  /** Releases (by checksum) that failed here: not downloaded again by this process. */
  const failed = new Set<string>();
  const stopped = new AbortController();

  const install = async (release: AgentReleaseInfo): Promise<void> => {
    log(`the server ships agent ${release.version} (this is ${options.version}); downloading ${release.url}`);
    let bytes: Uint8Array;
    try {
      bytes = await agent.download(
        release.url,
        Math.min(release.size, MAX_BUNDLE_BYTES),
        AbortSignal.any([stopped.signal, AbortSignal.timeout(300_000)]),
      );
    } catch (error) {
      log(`could not download agent ${release.version}: ${(error as Error).message}; keeping ${options.version}`);
      return; // tried again at the next check
    }
    const actual = sha256(bytes);
    if (actual !== release.sha256 || bytes.length !== release.size) {
      failed.add(release.sha256);
      log(
        `the download of agent ${release.version} does not match the server's checksum (expected sha256 ${release.sha256}, ${release.size} bytes; got ${actual}, ${bytes.length} bytes); not installing it, keeping ${options.version}`,
      );
      return;
    }
    const temporary = `${options.file}.update-${process.pid}`;
    try {
      const { mode } = await stat(options.file);
      await writeFile(temporary, bytes, { mode: mode & 0o7777 });
      await chmod(temporary, mode & 0o7777); // the umask may have narrowed it
      await rename(temporary, options.file);
    } catch (error) {
      await rm(temporary, { force: true });
      failed.add(release.sha256);
      log(
        `could not write agent ${release.version} over ${options.file}: ${(error as Error).message}; keeping ${options.version}`,
      );
      return;
    }
    installed = release.version;
    log(`installed agent ${release.version} at ${options.file} (sha256 ${actual}); restarting once no command runs`);
    while (agent.busy && !stopped.signal.aborted)
      await new Promise((resolve) => setTimeout(resolve, options.idleCheckMs ?? 500));
    if (stopped.signal.aborted) return;
    // A command given in this instant still finishes: the stop waits for it (and takes nothing new).
    await agent.stop({ graceSeconds: 7 * 86_400 });
  };

  const consider = (release: AgentReleaseInfo | null | undefined, accepted?: string): void => {
    if (release === null || release === undefined || working !== undefined || installed !== undefined) return;
    if (stopped.signal.aborted || failed.has(release.sha256)) return;
    if (updateRefusal(options.version, release.version, accepted) !== undefined) return;
    working = install(release).finally(() => (working = undefined));
  };

  const check = async (): Promise<void> => {
    try {
      const channel = await agent.channel(AbortSignal.any([stopped.signal, AbortSignal.timeout(60_000)]));
      consider(channel.release, channel.accepted);
    } catch (error) {
      if (!stopped.signal.aborted) log(`could not ask the server for its agent release: ${(error as Error).message}`);
    }
  };

  const timer = setInterval(() => void check(), options.everyMs);
  timer.unref();
  void check();
  return {
    consider,
    check,
    get installed() {
      return installed;
    },
    dispose: () => {
      clearInterval(timer);
      stopped.abort();
    },
  };
};

/**
 * Starts the agent again as the build now in `file`, after this process stopped cleanly. Under a supervisor (systemd
 * sets INVOCATION_ID in a unit's processes; DEPLOYER_AGENT_SUPERVISED=1 says so for any other) it only exits with
 * RESTART_EXIT_CODE, and the supervisor (`Restart=always`) starts the new build. Otherwise it starts the same command
 * line (Node's own flags, the file, the agent's arguments) as a new process with the same output, in the same process
 * group (a terminal's Ctrl-C still reaches it), and exits. Returns the exit code for this process.
 */
export const restart = (file: string, log: (message: string) => void, env: NodeJS.ProcessEnv = process.env): number => {
  if ((env['INVOCATION_ID'] ?? '') !== '' || env['DEPLOYER_AGENT_SUPERVISED'] === '1') {
    log(`exiting with code ${RESTART_EXIT_CODE} so that the service manager starts the new build`);
    return RESTART_EXIT_CODE;
  }
  const child = spawn(process.execPath, [...process.execArgv, file, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env,
  });
  child.unref();
  log(`restarted: the new build runs as process ${child.pid ?? '?'}; this process (${process.pid}) exits`);
  return 0;
};
