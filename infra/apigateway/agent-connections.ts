// The agents' WebSockets through API Gateway's @connections management API (locally, serverless-offline's
// emulation of it on its WebSocket port). AGENT_SOCKET_ENDPOINT is the API's https endpoint with its stage.
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import type { AgentConnections, AgentMessage } from '../../domain/targets/ports.js';

/** A connection that no longer exists: 410 GoneException (the SDK names it; serverless-offline sends a bare 410). */
const isGone = (error: unknown): boolean =>
  (error as { name?: string }).name === 'GoneException' ||
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410;

export class ApiGatewayAgentConnections implements AgentConnections {
  private readonly client: ApiGatewayManagementApiClient;

  constructor(endpoint: string, region: string) {
    this.client = new ApiGatewayManagementApiClient({
      endpoint,
      region,
      // A push is a wake-up: a slow one must not hold up the engine pass that queued the command.
      requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
      maxAttempts: 2,
    });
  }

  async post(connectionId: string, message: AgentMessage): Promise<'sent' | 'gone'> {
    try {
      await this.client.send(
        new PostToConnectionCommand({
          ConnectionId: connectionId,
          Data: new TextEncoder().encode(JSON.stringify(message)),
        }),
      );
      return 'sent';
    } catch (error) {
      if (isGone(error)) return 'gone';
      throw error;
    }
  }

  async close(connectionId: string): Promise<void> {
    try {
      await this.client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }
}
