// What the execution engine and the agents' output become in the deployment's event store (events.ts): the
// step_update, progress and state_change events of each engine pass, and one `log` event per line of output.
import type { Command, OutputChunk } from '../targets/types.js';
import type { EngineEvent } from './decide-pass.js';
import { outputLines } from '../../protocol/output-limits.js';
import type { KeyedEvents, NewEvent } from './events.js';

export { OUTPUT_TAIL, outputTail } from '../targets/commands.js';

export const engineEventsToNew = (
  events: readonly EngineEvent[],
  at: string,
  outputs: ReadonlyMap<string, string>,
): NewEvent[] =>
  events.map((e): NewEvent => {
    switch (e.type) {
      case 'step_update':
        return {
          at,
          event: {
            type: 'step_update',
            step_id: e.step.id,
            state: e.step.state,
            exit_code: e.step.exitCode,
            error_message: e.step.errorMessage,
            output: outputs.get(e.step.id) ?? null,
          },
        };
      case 'progress':
        return {
          at,
          event: {
            type: 'progress',
            deployment_id: e.deployment.id,
            progress: e.deployment.progress,
            completed_steps: e.deployment.completedSteps,
            total_steps: e.deployment.totalSteps,
            message: e.message,
          },
        };
      case 'state_change':
        return {
          at,
          event: {
            type: 'state_change',
            deployment_id: e.deploymentId,
            old_state: e.oldState,
            new_state: e.newState,
            message: e.message,
          },
        };
    }
  });

/** One `log` event per line of the chunks (a line split across two chunks stays two entries). */
export const outputToLogEvents = (
  command: Command,
  targetName: string | null,
  chunks: readonly OutputChunk[],
  at: string,
): NewEvent[] =>
  chunks.flatMap((chunk) =>
    outputLines(chunk.data).map((line): NewEvent => ({
      at,
      event: {
        type: 'log',
        log: {
          timestamp: at,
          level: chunk.stream === 'stderr' ? 'warn' : 'info',
          step_id: command.stepId,
          target_id: command.targetId,
          target_name: targetName,
          message: line,
          metadata: { stream: chunk.stream, command_id: command.id, attempt: command.attempt, seq: chunk.seq },
        },
      },
    })),
  );

/** Log events per keyed group: a group and its marker must fit one DynamoDB transaction with the head. */
export const EVENTS_PER_GROUP = 90;

/**
 * The log events of the chunks in groups keyed `<command id>#<seq>#<part>`: the event store appends each group at
 * most once, so a retried output post re-adds exactly the lines a crash lost, and never a line twice.
 */
export const outputToKeyedEvents = (
  command: Command,
  targetName: string | null,
  chunks: readonly OutputChunk[],
  at: string,
): KeyedEvents[] =>
  chunks.flatMap((chunk) => {
    const events = outputToLogEvents(command, targetName, [chunk], at);
    return Array.from({ length: Math.ceil(events.length / EVENTS_PER_GROUP) }, (_, part) => ({
      key: `${command.id}#${chunk.seq}#${part}`,
      events: events.slice(part * EVENTS_PER_GROUP, (part + 1) * EVENTS_PER_GROUP),
    }));
  });
