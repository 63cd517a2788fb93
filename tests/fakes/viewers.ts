// In-memory viewer channel ports (domain/streams/viewer-ports.ts) with the adapters' guarantees: subscribe is
// idempotent and limited per connection, a gone connection stores nothing, disconnect forgets everything; the push
// records what each connection was sent and answers `gone` for connections marked gone.
import {
  topicKey,
  type ViewerConnection,
  type ViewerMessage,
  type ViewerPush,
  type ViewerRegistry,
  type ViewerSubscribeOutcome,
  type ViewerTopic,
} from '../../domain/streams/viewer-ports.js';

export class FakeViewerRegistry implements ViewerRegistry {
  readonly connections = new Map<string, ViewerConnection>();
  /** topic key -> connection id -> the connection as subscribed. */
  readonly topics = new Map<string, Map<string, ViewerConnection>>();
  subscriberReads = 0;

  async connect(connection: ViewerConnection): Promise<void> {
    this.connections.set(connection.connectionId, connection);
  }
  async get(connectionId: string) {
    return this.connections.get(connectionId);
  }
  async connectionsOf(userId: string) {
    return [...this.connections.values()].filter((c) => c.userId === userId);
  }
  topicsOf(connectionId: string): string[] {
    return [...this.topics.entries()].filter(([, subs]) => subs.has(connectionId)).map(([key]) => key);
  }
  async subscribe(connection: ViewerConnection, topic: ViewerTopic, limit: number): Promise<ViewerSubscribeOutcome> {
    if (!this.connections.has(connection.connectionId)) return 'gone';
    const key = topicKey(topic);
    if (this.topics.get(key)?.has(connection.connectionId) === true) return 'subscribed';
    if (this.topicsOf(connection.connectionId).length >= limit) return 'limit';
    const subs = this.topics.get(key) ?? new Map<string, ViewerConnection>();
    subs.set(connection.connectionId, connection);
    this.topics.set(key, subs);
    return 'subscribed';
  }
  async unsubscribe(connectionId: string, topic: ViewerTopic): Promise<void> {
    this.topics.get(topicKey(topic))?.delete(connectionId);
  }
  async subscribers(topic: ViewerTopic) {
    this.subscriberReads += 1;
    return [...(this.topics.get(topicKey(topic))?.values() ?? [])];
  }
  async disconnect(connectionId: string): Promise<void> {
    this.connections.delete(connectionId);
    for (const subs of this.topics.values()) subs.delete(connectionId);
  }
  async expired(now: Date, limit: number) {
    return [...this.connections.values()]
      .filter((c) => Date.parse(c.expiresAt) < now.getTime())
      .sort((a, b) => a.expiresAt.localeCompare(b.expiresAt))
      .slice(0, limit)
      .map((c) => c.connectionId);
  }
}

export class FakeViewerPush implements ViewerPush {
  readonly sent = new Map<string, ViewerMessage[]>();
  readonly closed: string[] = [];
  readonly gone = new Set<string>();

  async send(connectionId: string, message: ViewerMessage): Promise<'sent' | 'gone'> {
    if (this.gone.has(connectionId)) return 'gone';
    this.sent.set(connectionId, [...(this.sent.get(connectionId) ?? []), message]);
    return 'sent';
  }
  async close(connectionId: string): Promise<void> {
    this.closed.push(connectionId);
    this.gone.add(connectionId);
  }
  /** What `connectionId` was sent. */
  to(connectionId: string): ViewerMessage[] {
    return this.sent.get(connectionId) ?? [];
  }
}

/** A stored viewer connection (a tenant user's login session with deployments:read, connected for 2 h). */
export const aViewer = (overrides: Partial<ViewerConnection> = {}): ViewerConnection => ({
  connectionId: 'conn-1',
  userId: 'u-1',
  tenantId: null,
  permissions: ['deployments:read'],
  credential: { kind: 'session', sseSessionId: 'sse-1', apiKeyId: null },
  connectedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T02:00:00.000Z',
  ...overrides,
});
