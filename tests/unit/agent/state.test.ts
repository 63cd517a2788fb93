import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CommandStore,
  readState,
  statePath,
  writeState,
  type AgentState,
  type CommandRecord,
} from '../../../agent/state.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const state: AgentState = {
  server: 'http://localhost:3000',
  target_id: 't-1',
  agent_token: 'dpa_secret',
  name: 'local-1',
  enrolled_at: '2026-11-22T10:00:00.000Z',
};

describe('state file', () => {
  it('is written with mode 0600 in a directory of mode 0700, and read back', async () => {
    // Prepare
    const stateDir = join(dir, 'agents', 'local-1');
    // Act
    await writeState(stateDir, state);
    const back = await readState(stateDir);
    // Assess
    expect((await stat(statePath(stateDir))).mode & 0o777).toBe(0o600);
    expect((await stat(stateDir)).mode & 0o777).toBe(0o700);
    expect(back).toEqual(state);
  });

  it('is replaced whole, keeps its mode, and leaves no temporary file behind', async () => {
    // Prepare
    await writeState(dir, state);
    // Act
    await writeState(dir, { ...state, target_id: 't-2' });
    // Assess
    expect((await readState(dir))?.target_id).toBe('t-2');
    expect((await stat(statePath(dir))).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('is absent before enrollment, and a damaged one is reported clearly', async () => {
    // Prepare
    const before = await readState(dir);
    await writeFile(statePath(dir), '{"server": "http://x"');
    // Act
    const damaged = readState(dir);
    // Assess
    expect(before).toBeUndefined();
    await expect(damaged).rejects.toThrow(/not valid JSON; remove it and enroll again/);
  });

  it('must name a server, target, token and name', async () => {
    // Prepare
    await writeFile(statePath(dir), JSON.stringify({ server: 'http://x', target_id: 't' }));
    // Act
    const incomplete = readState(dir);
    // Assess
    await expect(incomplete).rejects.toThrow(/incomplete/);
  });
});

describe('CommandStore', () => {
  const record = (id: string, status: CommandRecord['status'], updatedAt: string): CommandRecord => ({
    id,
    status,
    deployment_id: 'd',
    started_at: updatedAt,
    updated_at: updatedAt,
  });

  it('saves, reads and lists records with mode 0600', async () => {
    // Prepare
    const store = new CommandStore(dir);
    await store.init();
    // Act
    await store.save(record('a', 'started', '2026-11-22T10:00:00.000Z'));
    await store.save({
      ...record('a', 'completed', '2026-11-22T10:00:01.000Z'),
      result: { exit_code: 0, started_at: 's', completed_at: 'c' },
    });
    await store.save(record('b', 'started', '2026-11-22T10:00:02.000Z'));
    // Assess
    expect((await store.get('a'))?.status).toBe('completed');
    expect((await store.get('a'))?.result?.exit_code).toBe(0);
    expect(await store.get('missing')).toBeUndefined();
    expect((await store.list()).map((r) => r.id).sort()).toEqual(['a', 'b']);
    expect((await stat(join(dir, 'commands', 'a.json'))).mode & 0o777).toBe(0o600);
  });

  it('prunes reported records older than the limit, with their working directories, and nothing else', async () => {
    // Prepare
    const store = new CommandStore(dir);
    await store.init();
    const work = join(dir, 'work');
    const now = Date.parse('2026-11-22T10:00:00.000Z');
    const old = '2026-11-10T10:00:00.000Z';
    await store.save(record('old-reported', 'reported', old));
    await store.save(record('old-completed', 'completed', old));
    await store.save(record('new-reported', 'reported', '2026-11-21T10:00:00.000Z'));
    await mkdir(join(work, 'old-reported'), { recursive: true });
    await writeFile(join(work, 'old-reported', 'script.sh'), 'echo');
    // Act
    const removed = await store.prune(now, 7 * 86_400_000, work);
    // Assess
    expect(removed).toBe(1);
    expect((await store.list()).map((r) => r.id).sort()).toEqual(['new-reported', 'old-completed']);
    await expect(readFile(join(work, 'old-reported', 'script.sh'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses command ids that are not plain file names', async () => {
    // Prepare
    const store = new CommandStore(dir);
    // Act
    const escape = store.save(record('../state', 'started', '2026-11-22T10:00:00.000Z'));
    // Assess
    await expect(escape).rejects.toThrow(/Unusable command id/);
    expect(CommandStore.isSafeId('cmd-1f3a.2_b')).toBe(true);
    expect(CommandStore.isSafeId('a/b')).toBe(false);
    expect(CommandStore.isSafeId('..')).toBe(false);
  });
});
