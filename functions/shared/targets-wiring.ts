// The composition root, targets part: targets, enrollment, agent tokens and the commands agents run; the agent
// authenticator of /api/v1/agent/* lives here.
import { noAgentChannel, socketDispatch, withWakeUps } from '../../domain/targets/agent-dispatch.js';
import { admitAgent, MAX_POLL_WAIT_SECONDS } from '../../domain/targets/agent-protocol.js';
import { agentVersionOf } from '../../domain/targets/compatibility.js';
import { SERVER_VERSION } from './version.js';
import type { TargetsDeps } from '../../domain/targets/deps.js';
import type { AgentDispatch } from '../../domain/targets/ports.js';
import { agentRelease } from '../../infra/config.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoCommandRepository } from '../../infra/dynamodb/command-repository.js';
import { DynamoEnvironmentRepository } from '../../infra/dynamodb/environment-repository.js';
import { DynamoEnrollmentTokenRepository, DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import { DynamoTenantRepository } from '../../infra/dynamodb/tenant-repository.js';
import { systemSleeper } from '../../infra/system/sleeper.js';
import { secretCipher } from './identity-wiring.js';
import { commandListener } from '../../domain/deployments/command-listener.js';
import { requestAnalysis } from '../../domain/analysis/pipeline.js';
import { agentConnections } from './agent-connections-wiring.js';
import { analysisConfigured, analysisDeps } from './analysis-wiring.js';
import { logger } from './logger.js';
import { once } from './once.js';
import type { AgentAuthentication } from './shell.js';
import { deploymentEvents } from './stream-wiring.js';
import { engineQueue } from './queues-wiring.js';
import { ids, infra } from './wiring.js';

/** The command records themselves (no wake-ups). */
const storedCommands = once(() => {
  const { config: cfg, db } = infra();
  return new DynamoCommandRepository(
    db,
    cfg.TABLE_NAME,
    cfg.DEPLOYMENT_MAX_SECONDS + cfg.COMMAND_RETENTION_DAYS * 86_400,
  );
});

/**
 * How agents are reached (domain/targets/agent-dispatch.ts): over their WebSockets when the service offers them
 * (AGENT_SOCKET_ENDPOINT set), else no channel (agents poll; commands are only queued).
 */
export const agentDispatch = once((): AgentDispatch => {
  const connections = agentConnections();
  if (connections === undefined) return noAgentChannel(storedCommands());
  const { config: cfg, db, clock } = infra();
  return socketDispatch({
    targets: new DynamoTargetRepository(db, cfg.TABLE_NAME),
    connections,
    clock,
    commands: storedCommands(),
    cipher: secretCipher(),
    onError: (error, targetId) =>
      logger.warn('could not push a command or wake-up to an agent; it finds it on its next drain or check', {
        targetId,
        error: (error as Error).message,
      }),
  });
});

export const targetsDeps = once((): TargetsDeps => {
  const { config: cfg, db, clock } = infra();
  const targets = new DynamoTargetRepository(db, cfg.TABLE_NAME);
  const dispatch = agentDispatch();
  // Every inbox write pushes a wake-up to the target's agent over its WebSocket, when it holds one.
  const commands = withWakeUps(
    storedCommands(),
    (targetId) => dispatch.wake(targetId),
    (error, targetId) =>
      logger.warn('could not push a wake-up to an agent; it finds the entry on its next drain', {
        targetId,
        error: (error as Error).message,
      }),
  );
  return {
    targets,
    enrollmentTokens: new DynamoEnrollmentTokenRepository(db, cfg.TABLE_NAME),
    commands,
    dispatch,
    tenants: new DynamoTenantRepository(db, cfg.TABLE_NAME),
    environments: new DynamoEnvironmentRepository(db, cfg.TABLE_NAME),
    random: randomTokens,
    cipher: secretCipher(),
    ids: ids(),
    clock,
    sleeper: systemSleeper,
    settings: {
      serverVersion: SERVER_VERSION,
      agentRelease: agentRelease(),
      pollIntervalMs: cfg.AGENT_POLL_INTERVAL_MS,
      channel: {
        socketUrl: cfg.AGENT_SOCKET_URL ?? null,
        heartbeatSeconds: cfg.AGENT_HEARTBEAT_SECONDS,
        idlePingSeconds: cfg.AGENT_IDLE_PING_SECONDS,
        pollWaitSeconds: MAX_POLL_WAIT_SECONDS,
      },
    },
    // The event store and the engine queue are built on the first report, not with the targets' dependencies: most
    // functions that read targets never hear from an agent (their cold start stays as it was before the listener).
    listener: commandListener({
      events: { appendOnce: (deploymentId, groups) => deploymentEvents().appendOnce(deploymentId, groups) },
      engine: { wake: (deploymentId, options) => engineQueue().wake(deploymentId, options) },
      clock,
      targetName: async (targetId) => (await targets.get(targetId))?.name ?? null,
      analyze: analysisConfigured() ? (command) => requestAnalysis(analysisDeps(), command) : undefined,
      analysisLost: (command, error) =>
        logger.error('could not ask for the analysis of a failed command', { commandId: command.id, error }),
    }),
  };
});

/** The agent authenticator of /api/v1/agent/*: an agent token, from an agent of the server's major version. */
export const agentAuthentication: AgentAuthentication = {
  authenticateAgent: async (authorization, headers) =>
    admitAgent(targetsDeps(), authorization, agentVersionOf(headers)),
};
