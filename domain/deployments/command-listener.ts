// What the deployments context does with what agents report (the targets context's CommandListener port):
//   output    -> each line becomes a `log` event of the deployment's stream, once per (command, seq), as it arrives
//   completed -> the engine is woken for the deployment at once (naming the command: engine.ts EngineWake); a failed command is also sent for analysis (best
//                effort: a lost request leaves the command without analysis, never the agent's report unanswered)
//   completedAgain -> a repeated report (a retry): the engine is woken again, in case the first wake-up was lost
import type { Clock } from '../shared/ports.js';
import type { CommandListener } from '../targets/ports.js';
import type { Command } from '../targets/types.js';
import type { EngineQueue } from './engine.js';
import type { KeyedEventAppender } from './events.js';
import { outputToKeyedEvents } from './publish.js';

/**
 * Output arrives up to every 50 ms per running command: a target's name is read once a minute per target and
 * container, not on every batch (a rename shows on log lines within a minute).
 */
export const TARGET_NAME_TTL_MS = 60_000;

export interface CommandListenerDeps {
  readonly events: KeyedEventAppender;
  readonly engine: Pick<EngineQueue, 'wake'>;
  readonly clock: Clock;
  /** A target's current name (null when it is gone). */
  readonly targetName: (targetId: string) => Promise<string | null>;
  /** Asks for the analysis of a failed command; absent when the service has no analysis configured. */
  readonly analyze?: (command: Command) => Promise<unknown>;
  /** Told when the analysis request was lost (the wiring logs it). */
  readonly analysisLost: (command: Command, error: unknown) => void;
}

export const commandListener = (deps: CommandListenerDeps): CommandListener => {
  const names = new Map<string, { readonly name: string | null; readonly until: number }>();
  const targetName = async (targetId: string): Promise<string | null> => {
    const now = deps.clock.now().getTime();
    const cached = names.get(targetId);
    if (cached !== undefined && cached.until > now) return cached.name;
    const name = await deps.targetName(targetId);
    names.set(targetId, { name, until: now + TARGET_NAME_TTL_MS });
    return name;
  };
  return {
    output: async (command, chunks) => {
      const name = command.targetName ?? (await targetName(command.targetId));
      await deps.events.appendOnce(
        command.deploymentId,
        outputToKeyedEvents(command, name, chunks, deps.clock.now().toISOString()),
      );
    },
    completedAgain: async (command) => {
      await deps.engine.wake(command.deploymentId, { commandId: command.id });
    },
    completed: async (command) => {
      await deps.engine.wake(command.deploymentId, { commandId: command.id });
      if (deps.analyze === undefined || command.result === null || command.result.exitCode === 0) return;
      await deps.analyze(command).catch((error: unknown) => deps.analysisLost(command, error));
    },
  };
};
