// The viewers' WebSockets (the ViewerPush port): the same WebSocket API and @connections client as the agents'
// (management-api.ts), one JSON text frame per ViewerMessage.
import type { ViewerMessage, ViewerPush } from '../../domain/streams/viewer-ports.js';
import { ConnectionsApi } from './management-api.js';

export class ApiGatewayViewerPush implements ViewerPush {
  private readonly api: ConnectionsApi;

  constructor(endpoint: string, region: string) {
    this.api = new ConnectionsApi(endpoint, region);
  }

  send(connectionId: string, message: ViewerMessage): Promise<'sent' | 'gone'> {
    return this.api.post(connectionId, message);
  }

  close(connectionId: string): Promise<void> {
    return this.api.close(connectionId);
  }
}
