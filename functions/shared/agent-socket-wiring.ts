// The composition root of the agents' WebSocket function: only the target repository, the agent-token check and the
// @connections client (this function is invoked for every connect, disconnect and ping of the whole fleet, so its
// bundle stays small and its cold start short).
import type { ChannelDeps } from '../../domain/targets/agent-channel.js';
import { randomTokens } from '../../infra/crypto/tokens.js';
import { DynamoTargetRepository } from '../../infra/dynamodb/target-repository.js';
import { once } from './once.js';
import { agentConnections } from './agent-connections-wiring.js';
import { bestEffortWebhookEvents, webhookQueue } from './webhook-events-wiring.js';
import { SERVER_VERSION } from './version.js';
import { infra } from './wiring.js';

/** undefined when the service offers no socket (AGENT_SOCKET_ENDPOINT unset). */
export const channelDeps = once((): ChannelDeps | undefined => {
  const connections = agentConnections();
  if (connections === undefined) return undefined;
  const { config: cfg, db, clock } = infra();
  return {
    targets: new DynamoTargetRepository(db, cfg.TABLE_NAME),
    random: randomTokens,
    clock,
    connections,
    settings: { serverVersion: SERVER_VERSION },
    webhooks: { emitter: bestEffortWebhookEvents(), queue: webhookQueue() },
  };
});
