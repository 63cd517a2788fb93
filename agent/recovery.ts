// The command records a previous run left on disk (state.ts): a command that never completed is reported lost
// (after whatever its processes left running is ended), a completion the server never acknowledged is sent again,
// and records of reported commands older than keepRecordsDays are removed with their working directories.
import { LOST_EXIT_CODE } from './command.js';
import { endLostGroup } from './runner.js';
import type { CommandRecord, CommandStore } from './state.js';

export interface RecordsDeps {
  readonly store: CommandStore;
  readonly workDir: string;
  readonly killGraceMs: number;
  readonly keepRecordsDays: number;
  readonly log: (message: string) => void;
  /** Sends a recorded completion (again) until the server acknowledges it. */
  readonly resend: (record: CommandRecord) => void;
}

/** Commands of a previous run: those that never completed are reported lost; unacknowledged results re-sent. */
export const recoverRecords = async (deps: RecordsDeps): Promise<void> => {
  const records = await deps.store.list();
  for (const record of records) {
    if (record.status === 'reported') continue;
    let pending: CommandRecord = record;
    if (record.status === 'started' || record.result === undefined) {
      pending = await reportLost(deps, record);
    } else {
      deps.log(`re-sending the completion of ${record.id}`);
    }
    deps.resend(pending);
  }
  await pruneRecords(deps);
};

/** A command that was running when the agent stopped: its processes ended, then recorded as lost. */
const reportLost = async (deps: RecordsDeps, record: CommandRecord): Promise<CommandRecord> => {
  // Its processes may still run (the agent was killed, not the host): they end before it is reported lost.
  if (record.pid !== undefined) {
    const outcome = await endLostGroup(record.pid, record.pid_start_time, deps.killGraceMs);
    if (outcome === 'ended') deps.log(`ended the processes ${record.id} left running (group ${record.pid})`);
    if (outcome === 'unknown' || outcome === 'not-ours')
      deps.log(`could not tell whether process group ${record.pid} is still ${record.id}'s; left alone`);
  }
  const now = new Date().toISOString();
  const pending: CommandRecord = {
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
  await deps.store.save(pending);
  deps.log(`${record.id} was running when the agent stopped; reporting it as lost (exit ${LOST_EXIT_CODE})`);
  return pending;
};

/** Removes the records (and working directories) of commands reported more than keepRecordsDays ago. */
export const pruneRecords = async (deps: Omit<RecordsDeps, 'resend' | 'killGraceMs'>): Promise<void> => {
  const days = deps.keepRecordsDays;
  try {
    const removed = await deps.store.prune(Date.now(), days * 86_400_000, deps.workDir);
    if (removed > 0) deps.log(`removed ${removed} record(s) of commands older than ${days} days`);
  } catch (error) {
    deps.log(`could not prune old command records: ${(error as Error).message}`);
  }
};
