// The viewer channel's ports (issue 36): browsers and API clients watch a deployment's log or a resource list over the
// WebSocket API the agents use, and what is written is pushed to them instead of polled for. The registry stores
// who is connected (with the caller as verified at connect) and who watches what; the push sends a message to one
// connection. The wire messages are docs/decisions.md "The viewer channel".
import type { Permission } from '../identity/permissions.js';
import type { ResourceType } from './resource-sources.js';

/** What a connection can watch: one deployment's events, or one resource list (of a tenant, or of all: `null`). */
export type ViewerTopic =
  | { readonly kind: 'deployment'; readonly deploymentId: string }
  | { readonly kind: 'resources'; readonly resourceType: ResourceType; readonly tenantId: string | null };

/** The topic as one string (the registry's key part): `deployment#<id>`, `resources#<type>#<tenant or *>`. */
export const topicKey = (topic: ViewerTopic): string =>
  topic.kind === 'deployment'
    ? `deployment#${topic.deploymentId}`
    : `resources#${topic.resourceType}#${topic.tenantId ?? '*'}`;

/** A viewer's connection: the caller as verified from its single-use token at connect, and until when it may stay. */
export interface ViewerConnection {
  readonly connectionId: string;
  readonly userId: string;
  /** The caller's tenant (null: a global caller). */
  readonly tenantId: string | null;
  readonly permissions: readonly Permission[];
  /** The credential behind the token: closing a revoked one's connections looks these up. */
  readonly credential: {
    readonly kind: 'session' | 'api_key';
    /** The SSE session the token came from (its end closes the connection). */
    readonly sseSessionId: string;
    /** The API key (kind api_key), else null. */
    readonly apiKeyId: string | null;
  };
  readonly connectedAt: string;
  /** ISO time after which the connection is closed (the credential's or the session's end, at most 2 h). */
  readonly expiresAt: string;
}

/** Which connections to close: every one of a user, or those of one API key or one SSE session of that user. */
export type ViewerSelector =
  | { readonly userId: string }
  | { readonly userId: string; readonly apiKeyId: string }
  | { readonly userId: string; readonly sseSessionId: string };

/** What a subscribe did. */
export type ViewerSubscribeOutcome = 'subscribed' | 'limit' | 'gone';

/** Who is connected and who watches what (adapter: infra/dynamodb/viewer-repository.ts). */
export interface ViewerRegistry {
  connect(connection: ViewerConnection): Promise<void>;
  get(connectionId: string): Promise<ViewerConnection | undefined>;
  /** Open connections of a user (for the per-user limit and for closing). */
  connectionsOf(userId: string): Promise<readonly ViewerConnection[]>;
  /**
   * Idempotent: subscribing twice is one subscription. `limit`: a connection's most topics (`limit` when it has
   * them all and this is a new one); `gone` when the connection was disconnected (nothing is stored).
   */
  subscribe(connection: ViewerConnection, topic: ViewerTopic, limit: number): Promise<ViewerSubscribeOutcome>;
  unsubscribe(connectionId: string, topic: ViewerTopic): Promise<void>;
  /** The connections subscribed to `topic`, with what each may see (one query). */
  subscribers(topic: ViewerTopic): Promise<readonly ViewerConnection[]>;
  /** Forgets the connection and all its subscriptions (idempotent). */
  disconnect(connectionId: string): Promise<void>;
  /** Connections whose expiresAt has passed (for the sweep), up to `limit`. */
  expired(now: Date, limit: number): Promise<readonly string[]>;
}

/** One event of a deployment as the channel sends it: the SSE message `{event, data}` and its seq. */
export interface ViewerEvent {
  readonly id: number;
  readonly event: string;
  readonly data: unknown;
}

/** What the server sends to a viewer (JSON text frames). */
export type ViewerMessage =
  | { readonly type: 'subscribed'; readonly ref?: string; readonly topic: Readonly<Record<string, unknown>> }
  | { readonly type: 'unsubscribed'; readonly ref?: string; readonly topic: Readonly<Record<string, unknown>> }
  | { readonly type: 'events'; readonly deployment_id: string; readonly events: readonly ViewerEvent[] }
  | {
      readonly type: 'changes';
      readonly resource_type: ResourceType;
      readonly changes: readonly { readonly event: string; readonly data: unknown }[];
    }
  | { readonly type: 'pong'; readonly ref?: string }
  | {
      readonly type: 'error';
      readonly ref?: string;
      readonly error: {
        readonly code: string;
        readonly message: string;
        /** As the API's error envelope: field problems, the permission required... (empty when none). */
        readonly details: Readonly<Record<string, unknown>>;
      };
    }
  | { readonly type: 'closing'; readonly reason: 'revoked' | 'expired' };

/** Sends to one viewer connection (adapter: API Gateway's @connections). */
export interface ViewerPush {
  send(connectionId: string, message: ViewerMessage): Promise<'sent' | 'gone'>;
  close(connectionId: string): Promise<void>;
}

/** Closes the viewer connections of a revoked credential (called by identity use cases after their write commits). */
export interface ViewerCloser {
  close(selector: ViewerSelector, reason: 'revoked'): Promise<void>;
}
