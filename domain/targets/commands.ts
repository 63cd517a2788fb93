// Commands for agents, as the orchestrator (and, until it exists, the tests) creates and stops them.
import type { Clock, IdGenerator } from '../shared/ports.js';
import { eachLimited } from '../shared/concurrency.js';
import type { CommandRepository } from './ports.js';
import type { Command, OutputChunk } from './types.js';

/** The output tail a finished step's step_update carries (the spec's output tails are 2000 characters). */
export const OUTPUT_TAIL = 2000;

/**
 * A completion that carries all of a command's output, at most this many UTF-8 bytes, stores it in the completing
 * write instead of chunk items (a short command's whole output: one write instead of two).
 */
export const INLINE_OUTPUT_BYTES = 4096;

/** The last `OUTPUT_TAIL` characters of a command's output, both streams in seq order. */
export const outputTail = (chunks: readonly Pick<OutputChunk, 'data'>[]): string =>
  chunks
    .map((c) => c.data)
    .join('')
    .slice(-OUTPUT_TAIL);

/** A command as the orchestrator asks for it: what it runs and where; the service gives it its id and state. */
export type NewCommand = Pick<
  Command,
  | 'targetId'
  | 'deploymentId'
  | 'stepId'
  | 'attempt'
  | 'action'
  | 'script'
  | 'interpreter'
  | 'variables'
  | 'secretVariables'
  | 'sealedSecrets'
  | 'timeoutSeconds'
>;

export const enqueueCommand = async (
  deps: { commands: CommandRepository; ids: IdGenerator; clock: Clock },
  input: NewCommand,
): Promise<Command> => {
  const { id } = await deps.ids.next('command');
  const command: Command = {
    ...input,
    id,
    status: 'queued',
    createdAt: deps.clock.now().toISOString(),
    deliveredAt: null,
    cancelRequestedAt: null,
    outputSeq: -1,
    result: null,
  };
  await deps.commands.enqueue(command);
  return command;
};

/** Stops a command: never delivered -> cancelled; running -> the agent is told to kill it. Done ones are left. */
export const cancelCommand = async (
  deps: { commands: CommandRepository; clock: Clock },
  commandId: string,
): Promise<void> => {
  const command = await deps.commands.get(commandId);
  if (
    command === undefined ||
    command.status === 'completed' ||
    command.status === 'cancelled' ||
    command.cancelRequestedAt !== null
  )
    return;
  await deps.commands.requestCancel(command, deps.clock.now());
};

/** Reads of commands the index does not list yet, at most this many at once. */
const UNLISTED_READS = 16;

/**
 * Stops every command of a deployment that is still waiting or running (cancel, deployment timeout). `expected`: ids
 * of commands that may exist (the running steps'): the list comes from an eventually consistent index, so one it
 * does not hold is read from the table.
 */
export const cancelDeploymentCommands = async (
  deps: { commands: CommandRepository; clock: Clock },
  deploymentId: string,
  expected: readonly string[] = [],
): Promise<number> => {
  const listed = await deps.commands.listByDeployment(deploymentId);
  const known = new Set(listed.map((c) => c.id));
  const unlisted: Command[] = [];
  await eachLimited(
    [...new Set(expected)].filter((id) => !known.has(id)),
    UNLISTED_READS,
    async (id) => {
      const command = await deps.commands.get(id);
      if (command !== undefined && command.deploymentId === deploymentId) unlisted.push(command);
    },
  );
  const open = [...listed, ...unlisted].filter(
    (c) => c.status === 'queued' || (c.status === 'delivered' && c.cancelRequestedAt === null),
  );
  for (const command of open) await deps.commands.requestCancel(command, deps.clock.now());
  return open.length;
};
