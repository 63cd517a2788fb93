// The agents' WebSockets (API Gateway's @connections API), shared by every function that pushes to agents.
import type { AgentConnections } from '../../domain/targets/ports.js';
import { ApiGatewayAgentConnections } from '../../infra/apigateway/agent-connections.js';
import { once } from './once.js';
import { infra } from './wiring.js';

/** undefined when the service offers no socket (AGENT_SOCKET_ENDPOINT unset): agents poll. */
export const agentConnections = once((): AgentConnections | undefined => {
  const { config: cfg } = infra();
  return cfg.AGENT_SOCKET_ENDPOINT === undefined
    ? undefined
    : new ApiGatewayAgentConnections(cfg.AGENT_SOCKET_ENDPOINT, cfg.AWS_REGION);
});
