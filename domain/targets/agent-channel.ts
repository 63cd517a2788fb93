// The agent channel (decisions.md, "The agent channel"): agents hold a WebSocket open, and the server pushes a
// wake-up to it the moment something lands in the target's inbox (a command, a cancel notice). A push is only a
// wake-up: the inbox keeps every entry until the agent claims it over HTTP, so a lost push loses nothing, and an
// agent drains its inbox whenever its socket (re)opens. Idle agents cost one ping every 25 s. This file holds the
// socket's own events; what the server pushes over it (wake-ups, commands) is agent-dispatch.ts.
//
// channelInfo     (GET /api/v1/agent/channel) -> a heartbeat, and where to connect and how often to speak
// connectAgent    ($connect)    -> authenticate the agent token -> store the connection (replacing any) -> close the old
// disconnectAgent ($disconnect) -> clear the connection if it is still the target's current one
// socketHeartbeat (a message)  -> heartbeat (functions/sockets/agent-socket.ts reads and checks the message)
import { InvalidTokenError } from '../identity/errors.js';
import type { WebhookEmitter } from '../webhooks/notify.js';
import type { WebhookQueue } from '../webhooks/ports.js';
import { admitAgentVersion, authenticateAgent } from './agent-protocol.js';
import { releaseView } from './agent-release.js';
import { acceptedAgentVersions } from './compatibility.js';
import { statusOf } from './status.js';
import { targetView } from './views.js';
import type { ChannelSettings, TargetsDeps } from './deps.js';
import type { AgentCaller } from './types.js';
import type { AgentConnections } from './ports.js';

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

/**
 * A heartbeat over the socket: the target whose connection it is, or undefined for a connection no longer known. A
 * frame that names its target (agents from 2026-11-28 on) is one conditional write (the target must hold this very
 * connection, so naming another target changes nothing); one that does not is traced through the connection's lookup
 * item first (a read, then the write).
 */
export const socketHeartbeat = async (
  deps: Pick<ChannelDeps, 'targets' | 'clock'>,
  connectionId: string,
  named?: string,
): Promise<string | undefined> => {
  if (named !== undefined)
    return (await deps.targets.recordConnectionHeartbeat(named, connectionId, deps.clock.now())) ? named : undefined;
  const targetId = await deps.targets.connectionTarget(connectionId);
  if (targetId !== undefined) await deps.targets.recordHeartbeat(targetId, deps.clock.now());
  return targetId;
};
