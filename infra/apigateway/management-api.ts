// The @connections management API of the WebSocket API (locally, serverless-offline's emulation of it on its
// WebSocket port), shared by the agents' and the viewers' adapters: one client setup, one notion of a gone
// connection, the post and the close.
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';

/** A connection that no longer exists: 410 GoneException (the SDK names it; serverless-offline sends a bare 410). */
export const isGone = (error: unknown): boolean =>
  (error as { name?: string }).name === 'GoneException' ||
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410;

/** Posts and closes on one WebSocket API (`endpoint`: its https endpoint with the stage). */
export class ConnectionsApi {
  private readonly client: ApiGatewayManagementApiClient;

  constructor(endpoint: string, region: string) {
    this.client = new ApiGatewayManagementApiClient({
      endpoint,
      region,
      // A push is a wake-up or a live view's update: a slow one must not hold up the write that made it.
      requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 },
      maxAttempts: 2,
    });
  }

  /** Sends `message` as one JSON text frame; `gone` when the connection no longer exists. */
  async post(connectionId: string, message: unknown): Promise<'sent' | 'gone'> {
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

  /** Closes the connection (already gone is fine). */
  async close(connectionId: string): Promise<void> {
    try {
      await this.client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }
}
