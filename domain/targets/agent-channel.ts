// The agent channel (decisions.md, "The agent channel"): agents hold a WebSocket open, and the server pushes a
// wake-up to it the moment something lands in the target's inbox (a command, a cancel notice). A push is only a
// wake-up: the inbox keeps every entry until the agent claims it over HTTP, so a lost push loses nothing, and an
// agent drains its inbox whenever its socket (re)opens. Idle agents cost one ping every 25 s.
//
// connectAgent    ($connect)    -> authenticate the agent token -> store the connection (replacing any) -> close the old
// disconnectAgent ($disconnect) -> clear the connection if it is still the target's current one
// socketHeartbeat (a message)  -> heartbeat (functions/sockets/agent-socket.ts reads and checks the message)
// wakeTarget      (after an inbox write) -> post {type: wake} to the target's connection; a gone one is cleared
// launchCommands  (the engine starts steps) -> per command: pushed (claimed for the connection, then posted) when its
//                 agent takes pushes, else queued with a wake-up; a push that finds its connection gone is queued
// pushAgainTo     (the periodic check) -> a pushed command not acknowledged yet, posted again to the same installation
import { InvalidTokenError } from '../identity/errors.js';
import type { Clock } from '../shared/ports.js';
import type { WebhookEmitter } from '../webhooks/notify.js';
import type { WebhookQueue } from '../webhooks/ports.js';
import type { SecretCipher } from '../identity/ports.js';
import { admitAgentVersion, authenticateAgent, commandForAgent } from './agent-protocol.js';
import { releaseView } from './agent-release.js';
import { acceptedAgentVersions } from './compatibility.js';
import { statusOf } from './status.js';
import { targetView } from './views.js';
import type { TargetsDeps } from './deps.js';
import type { AgentCaller, Command, Target } from './types.js';
import type { AgentConnections, CommandRepository, TargetRepository } from './ports.js';

/** What an agent learns at `GET /api/v1/agent/channel`: where to connect and how often to speak. */
export interface ChannelSettings {
  /** The WebSocket URL agents connect to; null when the service offers none (agents poll). */
  readonly socketUrl: string | null;
  /** While a command runs: at most this long between heartbeats (the dead-agent rule allows 60 s). */
  readonly heartbeatSeconds: number;
  /** While idle, a ping this often keeps the connection (API Gateway closes one idle for 10 minutes). */
  readonly idlePingSeconds: number;
  /** An agent that cannot open the socket long-polls with this wait. */
  readonly pollWaitSeconds: number;
}

/** A push that finds its connection gone clears it only once the connection is this old: API Gateway refuses posts
 * to a connection whose $connect is still running, and that one is about to open (its agent drains on open). */
export const GONE_AFTER_MS = 30_000;

export type ChannelDeps = Pick<TargetsDeps, 'targets' | 'random' | 'clock'> & {
  readonly connections: AgentConnections;
  /** serverVersion: the handshake of an agent of another major version fails (compatibility.ts). */
  readonly settings: Pick<TargetsDeps['settings'], 'serverVersion'>;
  /** Outgoing webhooks (target.online, target.offline); absent: none. */
  readonly webhooks?: TargetWebhooks;
};

export interface TargetWebhooks {
  readonly emitter: WebhookEmitter;
  /** Where the offline check is sent, delayed (the webhook consumer looks at the target then). */
  readonly queue: WebhookQueue;
}

/** After a socket closes, the offline check waits past the 60 s a target stays online without a heartbeat. */
export const OFFLINE_CHECK_SECONDS = 75;

/**
 * GET /api/v1/agent/channel: also a heartbeat (the agent asks before each connection). It also names the agent build
 * the service ships (`release`, null when none is known) and the agent versions it accepts: an agent started with
 * --auto-update fetches a newer release of the accepted range (agent/update.ts).
 */
export const channelInfo = async (
  deps: Pick<TargetsDeps, 'targets' | 'clock' | 'settings'>,
  settings: ChannelSettings,
  agent: AgentCaller,
) => {
  await deps.targets.recordHeartbeat(agent.targetId, deps.clock.now(), agent.agentVersion);
  return {
    socket_url: settings.socketUrl,
    heartbeat_seconds: settings.heartbeatSeconds,
    idle_ping_seconds: settings.idlePingSeconds,
    poll_wait_seconds: settings.pollWaitSeconds,
    output_in_completion: true,
    release: releaseView(deps.settings.agentRelease),
    accepted: acceptedAgentVersions(deps.settings.serverVersion),
  };
};

/**
 * $connect: the agent token from the Authorization header and the agent's version from its x-deployer-agent-version;
 * a refused token (InvalidTokenError) or an agent of another major version (IncompatibleAgentError) fails the
 * handshake. The version is stored with the connection (it changes when an upgraded agent connects).
 */
export const connectAgent = async (
  deps: ChannelDeps,
  authorization: string | undefined,
  connectionId: string,
  instance?: string,
  agentVersion?: string,
): Promise<AgentCaller> => {
  const agent = await admitAgentVersion(
    deps,
    deps.settings.serverVersion,
    await authenticateAgent(deps, authorization),
    agentVersion,
  );
  // Someone listens for target.online: the target as it was, to tell whether it comes online now (one read).
  const watched =
    deps.webhooks !== undefined && (await deps.webhooks.emitter.listens('target.online', agent.tenantId))
      ? await deps.targets.get(agent.targetId)
      : undefined;
  const now = deps.clock.now();
  const connected = await deps.targets.connect(agent.targetId, connectionId, now, instance ?? null, agent.agentVersion);
  if (connected === undefined) throw new InvalidTokenError('The target was deleted; enroll the agent again.');
  if (watched !== undefined && statusOf(watched, now) !== 'online')
    await deps.webhooks?.emitter.emit({
      type: 'target.online',
      subject: [agent.targetId, connectionId],
      tenantId: agent.tenantId,
      timestamp: now.toISOString(),
      data: () =>
        targetView(
          {
            ...watched,
            connectionId,
            lastHeartbeatAt: now.toISOString(),
            agentVersion: agent.agentVersion ?? watched.agentVersion,
          },
          now,
        ),
    });
  if (connected.replaced !== null) {
    // Another process with this target's token (or this agent's previous socket, half-open): told, then closed.
    await deps.connections.post(connected.replaced, { type: 'replaced' });
    await deps.connections.close(connected.replaced);
  }
  return agent;
};

/** $disconnect: API Gateway says the connection closed (either side, or its time limits). */
export const disconnectAgent = async (
  deps: Pick<ChannelDeps, 'targets' | 'clock' | 'webhooks'>,
  connectionId: string,
) => {
  const targetId = await deps.targets.connectionTarget(connectionId);
  if (targetId === undefined) return targetId;
  await deps.targets.disconnect(targetId, connectionId, deps.clock.now());
  // Someone listens for target.offline: a delayed look (an agent that reconnects or polls meanwhile is not offline).
  if (deps.webhooks !== undefined) {
    const target = await deps.targets.get(targetId);
    if (target !== undefined && (await deps.webhooks.emitter.listens('target.offline', target.tenantId)))
      await deps.webhooks.queue.send(
        { kind: 'target_check', target_id: targetId, connection_id: connectionId },
        OFFLINE_CHECK_SECONDS,
      );
  }
  return targetId;
};

/** A heartbeat over the socket: the target whose connection it is, or undefined for a connection no longer known. */
export const socketHeartbeat = async (
  deps: Pick<ChannelDeps, 'targets' | 'clock'>,
  connectionId: string,
): Promise<string | undefined> => {
  const targetId = await deps.targets.connectionTarget(connectionId);
  if (targetId !== undefined) await deps.targets.recordHeartbeat(targetId, deps.clock.now());
  return targetId;
};

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
  await Promise.all(
    commands.map(async (command) => {
      const target = targets.get(command.targetId);
      const connectionId = target?.connectionId;
      const instance = target?.connectionInstance;
      const message =
        typeof connectionId === 'string' && typeof instance === 'string'
          ? pushMessage(deps.cipher, command)
          : undefined;
      if (target === undefined || message === undefined || typeof connectionId !== 'string' || !instance) {
        await deps.commands.enqueue(command);
        await wakeConnection(deps, target).catch((error: unknown) => deps.onError(error, command.targetId));
        return;
      }
      const to = { connectionId, instance, at: deps.clock.now().toISOString() };
      if (!(await deps.commands.enqueuePushed(command, to))) return;
      await postPushed(deps, command, target, connectionId, message, true);
    }),
  );
};

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

/** Revoked (the target deleted): the agent is told and its connection closed. */
export const closeTargetConnection = async (
  deps: { readonly connections: AgentConnections },
  connectionId: string | null | undefined,
): Promise<void> => {
  if (typeof connectionId !== 'string') return;
  await deps.connections.post(connectionId, { type: 'revoked' });
  await deps.connections.close(connectionId);
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
    complete: (commandId, result, outputSeq) => commands.complete(commandId, result, outputSeq),
  };
};
