// publishPass: what one engine pass publishes once its write succeeded. Its step_update, progress and state_change
// events go to the deployment's event store, a finished step's carrying its output tail.
//
// publishPass -> the finished steps' output (the tail its completion stored, else its chunks read side by side) ->
// events keyed by the transition -> appended once
import type { Clock } from '../shared/ports.js';
import type { CommandRepository } from '../targets/ports.js';
import type { Command } from '../targets/types.js';
import { commandIdOf, type EngineEvent } from './decide.js';
import { transitionGroups, type KeyedEventAppender } from './events.js';
import { engineEventsToNew, outputTail } from './publish.js';

export interface PublishPassDeps {
  readonly commands: Pick<CommandRepository, 'output'>;
  readonly events: KeyedEventAppender;
  readonly clock: Clock;
}

/**
 * Appends a pass's events; `revision` is the one its write produced. They are keyed by it and by the state entered,
 * so a retried or concurrent observer of the same transition appends nothing twice.
 */
export const publishPass = async (
  deps: PublishPassDeps,
  deploymentId: string,
  events: readonly EngineEvent[],
  revision: number,
  commands: ReadonlyMap<string, Command> = new Map(),
): Promise<void> => {
  // The finished steps' output: the tail its command's completion stored, else read side by side (a fan-out's pass
  // finishes many steps at once).
  const finished = events.flatMap((e) =>
    e.type === 'step_update' && (e.step.state === 'completed' || e.step.state === 'failed') ? [e.step] : [],
  );
  const outputs = new Map(
    await Promise.all(
      finished.map(async (step) => {
        const id = commandIdOf(step.id, step.retryCount + 1);
        const stored = commands.get(step.id);
        const tail =
          stored?.id === id && stored.outputTail !== undefined
            ? stored.outputTail
            : outputTail(await deps.commands.output(id));
        return [step.id, tail] as const;
      }),
    ),
  );
  await deps.events.appendOnce(
    deploymentId,
    transitionGroups(revision, engineEventsToNew(events, deps.clock.now().toISOString(), outputs)),
  );
};
