// The viewers' WebSockets through API Gateway's @connections management API (the same API as the agents'; locally
// serverless-offline's emulation on its WebSocket port): a message posted as one JSON text frame, a close.
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import type { ViewerMessage, ViewerPush } from '../../domain/streams/viewer-ports.js';

/** A connection that no longer exists: 410 GoneException (the SDK names it; serverless-offline sends a bare 410). */
const isGone = (error: unknown): boolean =>
  (error as { name?: string }).name === 'GoneException' ||
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410;

export class ApiGatewayViewerConnections implements ViewerPush {
  private readonly client: ApiGatewayManagementApiClient;

  constructor(endpoint: string, region: string) {
    this.client = new ApiGatewayManagementApiClient({
      endpoint,
      region,
      // A push rides a write (an output post, an engine pass): a slow one must not hold it up.
      requestHandler: { connectionTimeout: 1_000, requestTimeout: 2_000 },
      maxAttempts: 2,
    });
  }

  async send(connectionId: string, message: ViewerMessage): Promise<'sent' | 'gone'> {
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
