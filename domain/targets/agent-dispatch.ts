// How the service reaches agents between their polls: the AgentDispatch port (ports.ts) and its two adapters.
// socketDispatch pushes over the agents' WebSockets (agent-channel.ts); noAgentChannel serves a service without a
// WebSocket API (agents poll: commands are only queued, nobody is woken). The wiring builds one and passes it on;
// the domain never asks whether a channel exists.
//
// wakeTarget      (after an inbox write) -> post {type: wake} to the target's connection; a gone one is cleared
// launchCommands  (the engine starts steps) -> per command: pushed (claimed for the connection, then posted) when its
//                 agent takes pushes, else queued with a wake-up; a push that finds its connection gone is queued
// pushAgainTo     (the periodic check) -> a pushed command not acknowledged yet, posted again to the same installation
// revoke          (the target deleted) -> the agent told, its connection closed and cleared
import type { Clock } from '../shared/ports.js';
import type { SecretCipher } from '../identity/ports.js';
import { commandForAgent } from './agent-protocol.js';
import type { Command, Target } from './types.js';
import type { AgentConnections, AgentDispatch, CommandRepository, TargetRepository } from './ports.js';
import { eachLimited } from '../shared/concurrency.js';

/** A push that finds its connection gone clears it only once the connection is this old: API Gateway refuses posts
 * to a connection whose $connect is still running, and that one is about to open (its agent drains on open). */
export const GONE_AFTER_MS = 30_000;

type WakeDeps = {
  readonly targets: TargetRepository;
  readonly connections: AgentConnections;
  readonly clock: Clock;
};

/** Tells the target's agent to look at its inbox now; false when it has no open connection (it polls, or is away). */
export const wakeTarget = async (deps: WakeDeps, targetId: string): Promise<boolean> =>
  wakeConnection(deps, await deps.targets.get(targetId));

/** wakeTarget with the target already read. */
const wakeConnection = async (deps: WakeDeps, target: Target | undefined): Promise<boolean> => {
  const connectionId = target?.connectionId;
  if (target === undefined || typeof connectionId !== 'string') return false;
  if ((await deps.connections.post(connectionId, { type: 'wake' })) === 'sent') return true;
  await connectionGone(deps, target, connectionId);
  return false;
};

/** A post found the connection gone: its $disconnect was lost (or is on its way), so the record stops naming it. */
const connectionGone = async (deps: WakeDeps, target: Target, connectionId: string): Promise<void> => {
  const now = deps.clock.now();
  const opened = typeof target.connectedAt === 'string' ? Date.parse(target.connectedAt) : 0;
  if (now.getTime() - opened >= GONE_AFTER_MS) await deps.targets.disconnect(target.id, connectionId, now);
};

/**
 * The largest command pushed over the socket, serialised (API Gateway takes messages of up to 128 KB); a larger one
 * is queued with a wake-up and claimed over HTTP.
 */
export const MAX_PUSHED_COMMAND_BYTES = 96 * 1024;

/**
 * The message that pushes `command`, or undefined when it must be claimed over HTTP instead: a command with secret
 * variables (secret values never travel over the socket), or one too large for a WebSocket message.
 */
export const pushMessage = (
  cipher: SecretCipher,
  command: Command,
): { readonly type: 'command'; readonly command: Readonly<Record<string, unknown>> } | undefined => {
  if (command.secretVariables.length > 0) return undefined;
  const message = { type: 'command' as const, command: commandForAgent(cipher, command) };
  return Buffer.byteLength(JSON.stringify(message)) <= MAX_PUSHED_COMMAND_BYTES ? message : undefined;
};

export type LaunchDeps = WakeDeps & {
  readonly commands: CommandRepository;
  readonly cipher: SecretCipher;
  /** A push or wake-up that failed (the command waits for a drain, a poll, or the next check's push). */
  readonly onError: (error: unknown, targetId: string) => void;
};

/**
 * Stores the commands the engine launches and hands each to its agent. The targets are read in one batch. A target
 * whose connection was opened by an agent that takes pushes (it named its installation) gets the command itself: the
 * command is stored already claimed for that connection (one conditional put), then posted; a post that finds the
 * connection gone puts it back in the queue (unpush) and wakes whatever connection the target has now. Any other
 * command is queued and its agent woken, as before. A command stored by an earlier pass is neither stored nor pushed
 * again (the periodic check pushes what was not acknowledged).
 */
export const launchCommands = async (deps: LaunchDeps, commands: readonly Command[]): Promise<void> => {
  const targets = new Map(
    (await deps.targets.getMany([...new Set(commands.map((c) => c.targetId))])).map((t) => [t.id, t] as const),
  );
  await eachLimited(commands, LAUNCH_CONCURRENCY, async (command) => {
    const target = targets.get(command.targetId);
    const connectionId = target?.connectionId;
    const instance = target?.connectionInstance;
    const message =
      typeof connectionId === 'string' && typeof instance === 'string' ? pushMessage(deps.cipher, command) : undefined;
    if (target === undefined || message === undefined || typeof connectionId !== 'string' || !instance) {
      await deps.commands.enqueue(command);
      await wakeConnection(deps, target).catch((error: unknown) => deps.onError(error, command.targetId));
      return;
    }
    const to = { connectionId, instance, at: deps.clock.now().toISOString() };
    if (!(await deps.commands.enqueuePushed(command, to))) return;
    await postPushed(deps, command, target, connectionId, message, true);
  });
};

/**
 * Commands launched at once by one pass. A round to 1,000 targets used to open a request per command at once: at 300
 * on the 2-core machine the database's connections timed out (2 s) and the whole pass failed and was retried.
 */
export const LAUNCH_CONCURRENCY = 32;

const postPushed = async (
  deps: LaunchDeps,
  command: Command,
  target: Target,
  connectionId: string,
  message: NonNullable<ReturnType<typeof pushMessage>>,
  first: boolean,
): Promise<void> => {
  let outcome: 'sent' | 'gone';
  try {
    outcome = await deps.connections.post(connectionId, message);
  } catch (error) {
    // Unknown whether it arrived: it stays pushed (the same installation claims it on its next drain, and the check
    // pushes it again).
    deps.onError(error, command.targetId);
    return;
  }
  if (outcome === 'sent') return;
  await connectionGone(deps, target, connectionId).catch((error: unknown) => deps.onError(error, command.targetId));
  // The first push found its connection gone, so nobody got it: queued again for any claim, and the target's current
  // connection (if a newer one) woken. A second push that finds its connection gone proves nothing about the first.
  if (first && (await deps.commands.unpush(command, connectionId))) {
    await wakeTarget(deps, command.targetId).catch((error: unknown) => deps.onError(error, command.targetId));
  }
};

/**
 * The periodic check's second push of a command not acknowledged REWAKE_AFTER_MS after its push: to the target's
 * current connection when the same installation holds it (the agent ignores a command it already has). Another
 * installation never gets it: that is left to the dead-agent rule, as for a command claimed over HTTP.
 */
export const pushAgainTo = async (deps: LaunchDeps, command: Command, target: Target | undefined): Promise<void> => {
  const connectionId = target?.connectionId;
  if (target === undefined || command.pushedTo === undefined || typeof connectionId !== 'string') return;
  if (target.connectionInstance !== command.pushedTo.instance) return;
  const message = pushMessage(deps.cipher, command);
  if (message === undefined) return;
  await postPushed(deps, command, target, connectionId, message, false);
};

/**
 * The command repository of a service with the agent channel: every inbox write (a command queued, a cancel notice)
 * is followed by a wake-up of its target. A failed push is reported to `onError` and otherwise ignored: the entry
 * waits in the inbox for the agent's next drain (on reconnect) or poll.
 */
export const withWakeUps = (
  commands: CommandRepository,
  wake: (targetId: string) => Promise<unknown>,
  onError: (error: unknown, targetId: string) => void,
): CommandRepository => {
  const wakeUp = async (command: Command) => {
    try {
      await wake(command.targetId);
    } catch (error) {
      onError(error, command.targetId);
    }
  };
  return {
    enqueue: async (command) => {
      await commands.enqueue(command);
      await wakeUp(command);
    },
    requestCancel: async (command, at) => {
      await commands.requestCancel(command, at);
      await wakeUp(command);
    },
    enqueuePushed: (command, to) => commands.enqueuePushed(command, to),
    unpush: (command, connectionId) => commands.unpush(command, connectionId),
    acknowledgePush: (commandId) => commands.acknowledgePush(commandId),
    get: (id) => commands.get(id),
    listByDeployment: (deploymentId) => commands.listByDeployment(deploymentId),
    claimInbox: (targetId, max, at, instance) => commands.claimInbox(targetId, max, at, instance),
    appendOutput: (command, chunks, at, options) => commands.appendOutput(command, chunks, at, options),
    output: (commandId) => commands.output(commandId),
    complete: (commandId, result, outputSeq, whole) => commands.complete(commandId, result, outputSeq, whole),
    completeAs: (targetId, commandId, result, outputSeq, whole) =>
      commands.completeAs(targetId, commandId, result, outputSeq, whole),
  };
};

/** The AgentDispatch of a service with the agent channel: wake-ups and commands over the agents' WebSockets. */
export const socketDispatch = (deps: LaunchDeps): AgentDispatch => ({
  wake: (targetId) => wakeTarget(deps, targetId),
  launch: (commands) => launchCommands(deps, commands),
  pushAgain: (command, target) => pushAgainTo(deps, command, target),
  revoke: async (target) => {
    const connectionId = target.connectionId;
    if (typeof connectionId !== 'string') return;
    // Best effort: the token is already refused, so a socket left open can do nothing and closes with its limits.
    await (async () => {
      await deps.connections.post(connectionId, { type: 'revoked' });
      await deps.connections.close(connectionId);
    })().catch(() => undefined);
    await deps.targets.disconnect(target.id, connectionId, deps.clock.now()).catch(() => undefined);
  },
});

/** The AgentDispatch of a service without a WebSocket API: agents poll, so commands are only queued. */
export const noAgentChannel = (commands: Pick<CommandRepository, 'enqueue'>): AgentDispatch => ({
  wake: async () => false,
  launch: async (launched) => {
    await Promise.all(launched.map((command) => commands.enqueue(command)));
  },
  pushAgain: async () => undefined,
  revoke: async () => undefined,
});
