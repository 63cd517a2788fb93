// The analysis endpoint's command results (api.md "Command result"): one per command an agent was given for the
// deployment (every attempt of every step, rollbacks included), ordered by start time, with the last 2000
// characters of each stream. The generated `analysis` object of failed commands comes with failure analysis.
import { offsetTime } from '../shared/time-format.js';
import type { Caller } from '../identity/types.js';
import type { CommandRepository } from '../targets/ports.js';
import type { Command, StoredChunk } from '../targets/types.js';
import { visibleDeployment } from './cancel.js';
import type { DeploymentRepository } from './ports.js';
import type { PlanStep } from './types.js';

export const TAIL_CHARS = 2000;

export interface CommandResultsDeps {
  readonly deployments: DeploymentRepository;
  readonly commands: Pick<CommandRepository, 'listByDeployment' | 'output'>;
}

/** `completed` (exit 0), `failed` (another exit code), else the command's own status (queued, delivered, cancelled). */
const statusOf = (command: Command): string => {
  if (command.status !== 'completed' || command.result === null)
    return command.status === 'delivered' ? 'running' : command.status;
  return command.result.exitCode === 0 ? 'completed' : 'failed';
};

const tail = (chunks: readonly StoredChunk[], stream: 'stdout' | 'stderr'): string | undefined => {
  const text = chunks
    .filter((c) => c.stream === stream)
    .map((c) => c.data)
    .join('');
  return text === '' ? undefined : text.slice(-TAIL_CHARS);
};

export const commandResults = async (deps: CommandResultsDeps, caller: Caller, id: string) => {
  const deployment = await visibleDeployment(deps, caller, id);
  const steps = new Map<string, PlanStep>(deployment.plan.steps.map((s) => [s.id, s]));
  const commands = await deps.commands.listByDeployment(deployment.id);
  const results = await Promise.all(
    commands.map(async (command) => {
      const step = steps.get(command.stepId);
      const chunks = await deps.commands.output(command.id);
      const startedAt = command.result?.startedAt ?? command.deliveredAt;
      const completedAt = command.result?.completedAt ?? null;
      const optional = {
        ...(step === undefined
          ? {}
          : {
              target_name: step.targetName,
              action_name: step.rollbackOf === undefined ? step.actionName : `${step.actionName} (rollback)`,
            }),
        ...(command.result === null ? {} : { exit_code: command.result.exitCode }),
        ...(tail(chunks, 'stdout') === undefined ? {} : { stdout_tail: tail(chunks, 'stdout') }),
        ...(tail(chunks, 'stderr') === undefined ? {} : { stderr_tail: tail(chunks, 'stderr') }),
        ...(command.result?.errorMessage == null ? {} : { error_message: command.result.errorMessage }),
        // Only failed commands carry an analysis, once the pipeline produced it.
        ...(statusOf(command) !== 'failed' || command.analysis == null
          ? {}
          : {
              analysis: {
                ...command.analysis,
                analyzed_at: offsetTime(String(command.analysis['analyzed_at'] ?? '')),
              },
            }),
      };
      return {
        id: command.id,
        target_id: command.targetId,
        status: statusOf(command),
        started_at: startedAt === null ? null : offsetTime(startedAt),
        completed_at: completedAt === null ? null : offsetTime(completedAt),
        duration_ms:
          startedAt !== null && completedAt !== null ? Date.parse(completedAt) - Date.parse(startedAt) : null,
        ...optional,
      };
    }),
  );
  // By start time; commands that never started last, in creation order.
  return results.sort((a, b) => (a.started_at ?? '\uffff').localeCompare(b.started_at ?? '\uffff'));
};
