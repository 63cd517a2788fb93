// What the agent keeps on disk in its state directory:
//   state.json            {server, target_id, agent_token, name, enrolled_at}: who this agent is (mode 0600)
//   commands/<id>.json    one record per command received: started -> completed -> reported
//   instance              a random id naming this installation (these records) to the server: commands pushed to
//                         it are handed back only to it, which runs each id at most once
// Every file is written whole to a temporary name and renamed, so a crash never leaves half a file.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_INSTANCE_PATTERN } from '../protocol/headers.js';
import type { CompleteRequest } from '../protocol/messages.js';

export interface AgentState {
  readonly server: string;
  readonly target_id: string;
  readonly agent_token: string;
  readonly name: string;
  readonly enrolled_at: string;
}

/**
 * started: recorded before the process is spawned (so it is never spawned twice); completed: the result is known
 * but the server has not acknowledged it; reported: the server has it (or no longer wants it).
 */
export type CommandStatus = 'started' | 'completed' | 'reported';

export interface CommandRecord {
  readonly id: string;
  readonly status: CommandStatus;
  readonly deployment_id: string;
  readonly started_at: string;
  /** The command's process group (its leader's pid) and the leader's start time, once it runs. */
  readonly pid?: number;
  readonly pid_start_time?: string;
  readonly result?: CompleteRequest;
  readonly updated_at: string;
}

/** Writes a file atomically (temporary file, fsync, rename) with the given mode. */
export const writeFileAtomic = async (path: string, data: string, mode = 0o600): Promise<void> => {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temporary, 'w', mode);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await chmod(temporary, mode); // the umask may have taken bits away; never adds any to 0600
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
};

/** The server URL as stored and compared: no trailing slash. */
export const normalizeServer = (server: string): string => server.trim().replace(/\/+$/, '');

const STATE_FILE = 'state.json';

export const statePath = (stateDir: string): string => join(stateDir, STATE_FILE);

export const readState = async (stateDir: string): Promise<AgentState | undefined> => {
  let text: string;
  try {
    text = await readFile(statePath(stateDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: Partial<AgentState>;
  try {
    parsed = JSON.parse(text) as Partial<AgentState>;
  } catch {
    throw new Error(
      `The state file ${statePath(stateDir)} is not valid JSON; remove it and enroll again with --enroll TOKEN`,
    );
  }
  const { server, target_id, agent_token, name, enrolled_at } = parsed;
  if (
    typeof server !== 'string' ||
    typeof target_id !== 'string' ||
    typeof agent_token !== 'string' ||
    typeof name !== 'string'
  ) {
    throw new Error(
      `The state file ${statePath(stateDir)} is incomplete; remove it and enroll again with --enroll TOKEN`,
    );
  }
  return { server, target_id, agent_token, name, enrolled_at: typeof enrolled_at === 'string' ? enrolled_at : '' };
};

export const writeState = async (stateDir: string, state: AgentState): Promise<void> => {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(statePath(stateDir), `${JSON.stringify(state, null, 2)}\n`, 0o600);
};

const INSTANCE_FILE = 'instance';

/** This installation's id (made once, kept in the state folder beside the command records it stands for). */
export const readOrCreateInstance = async (stateDir: string): Promise<string> => {
  const path = join(stateDir, INSTANCE_FILE);
  const kept = (await readFile(path, 'utf8').catch(() => '')).trim();
  if (AGENT_INSTANCE_PATTERN.test(kept)) return kept;
  const made = randomBytes(16).toString('hex');
  await writeFileAtomic(path, `${made}\n`, 0o600);
  return made;
};

const SAFE_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** Command records under `<state-dir>/commands`. */
export class CommandStore {
  private readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'commands');
  }

  /** Command ids become file names: anything else than plain characters is refused. */
  static isSafeId(id: string): boolean {
    return SAFE_ID.test(id) && id !== '.' && id !== '..';
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  async get(id: string): Promise<CommandRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.path(id), 'utf8')) as CommandRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async save(record: CommandRecord): Promise<void> {
    await writeFileAtomic(this.path(record.id), `${JSON.stringify(record)}\n`, 0o600);
  }

  async list(): Promise<CommandRecord[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const records: CommandRecord[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const record = await this.get(name.slice(0, -'.json'.length)).catch(() => undefined);
      if (record !== undefined) records.push(record);
    }
    return records;
  }

  /** Removes reported records (and their working directories) last changed more than `maxAgeMs` ago. */
  async prune(now: number, maxAgeMs: number, workDir: string): Promise<number> {
    let removed = 0;
    for (const record of await this.list()) {
      if (record.status !== 'reported' || now - Date.parse(record.updated_at) <= maxAgeMs) continue;
      await rm(join(workDir, record.id), { recursive: true, force: true });
      await rm(this.path(record.id), { force: true });
      removed += 1;
    }
    return removed;
  }

  private path(id: string): string {
    if (!CommandStore.isSafeId(id)) throw new Error(`Unusable command id '${id}'`);
    return join(this.dir, `${id}.json`);
  }
}
