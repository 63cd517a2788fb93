// The agents' WebSockets through API Gateway's @connections management API (management-api.ts).
// AGENT_SOCKET_ENDPOINT is the API's https endpoint with its stage.
import type { AgentConnections, AgentMessage } from '../../domain/targets/ports.js';
import { ConnectionsApi } from './management-api.js';

export class ApiGatewayAgentConnections implements AgentConnections {
  private readonly api: ConnectionsApi;

  constructor(endpoint: string, region: string) {
    this.api = new ConnectionsApi(endpoint, region);
  }

  post(connectionId: string, message: AgentMessage): Promise<'sent' | 'gone'> {
    return this.api.post(connectionId, message);
  }

  close(connectionId: string): Promise<void> {
    return this.api.close(connectionId);
  }
}
