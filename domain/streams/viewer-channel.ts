// The viewer channel (docs/decisions.md "The viewer channel"): a browser or API client connects to the WebSocket API
// with a single-use `sse_token`, is stored with the caller as verified then, and sends subscribe, unsubscribe and
// ping messages. This file holds the connection's life: connect (verify, per-user limit, store), the check every
// message of a stored connection goes through (known, not expired, credential still valid), unsubscribe, ping and
// disconnect. Subscribing is viewer-subscribe.ts; closing on revocation and expiry is viewer-revocation.ts.
import { DomainError } from '../errors.js';
import type { DeploymentEventStore, KeyedEventAppender, KeyedEventLookup } from '../deployments/events.js';
import type { DeploymentRepository } from '../deployments/ports.js';
import { InvalidTokenError } from '../identity/errors.js';
import type { SseGrant } from '../identity/ports.js';
import type { Caller } from '../identity/types.js';
import type { Clock } from '../shared/ports.js';
import type { Warn } from './ports.js';
import type { ResourceType } from './resource-sources.js';
import type { ViewerResourceDeps } from './viewer-resources.js';
import type { ViewerConnection, ViewerMessage, ViewerPush, ViewerRegistry, ViewerTopic } from './viewer-ports.js';

/** API Gateway closes a WebSocket after 2 hours whatever happens: a connection is stored for at most that long. */
export const VIEWER_MAX_LIFETIME_MS = 2 * 60 * 60 * 1000;
/** Topics one connection may watch at once. */
export const VIEWER_TOPIC_LIMIT = 20;

/** The credential checks of the SSE endpoints (domain/identity/sse-tokens.ts), as the channel uses them. */
export interface ViewerAuth {
  /** `?sse_token=` -> the caller and its grant, once (single use); InvalidTokenError otherwise. */
  verify(token: string | undefined): Promise<{ readonly caller: Caller; readonly grant: SseGrant }>;
  /** Whether the grant's session lives and its credential (the account, or the API key) still allows it. */
  stillValid(grant: SseGrant): Promise<boolean>;
  /** When an API key expires (ISO), null when it does not. */
  apiKeyExpiry(apiKeyId: string): Promise<string | null>;
}

export interface ViewerChannelDeps {
  readonly registry: ViewerRegistry;
  readonly push: ViewerPush;
  readonly auth: ViewerAuth;
  readonly clock: Clock;
  /** STREAMS_PER_USER: viewer connections one user may hold open. */
  readonly connectionsPerUser: number;
  readonly warn: Warn;
}

/** What subscribing reads besides the channel: the deployments and their events, the resource lists, a timer. */
export interface ViewerSubscribeDeps extends ViewerChannelDeps {
  readonly deployments: DeploymentRepository;
  readonly events: DeploymentEventStore & KeyedEventAppender & KeyedEventLookup;
  readonly resources: ViewerResourceDeps;
  /** Waits `milliseconds` (the second catch-up's pause). */
  readonly wait: (milliseconds: number) => Promise<void>;
}

/** A user who already holds STREAMS_PER_USER viewer connections (the handshake's 429). */
export class TooManyViewersError extends DomainError {
  readonly kind = 'rate_limited' as const;
  constructor(limit: number) {
    super('RATE_LIMITED', `At most ${limit} viewer connections may be open at once per user; close one and retry.`, {
      limit,
    });
  }
}

/** A topic as a message names it (the wire's fields, parsed). */
export type TopicRequest =
  | { readonly topic: 'deployment'; readonly deploymentId: string; readonly lastEventId: number }
  | {
      readonly topic: 'resources';
      readonly resourceType: ResourceType;
      readonly tenantId: string | undefined;
      readonly snapshot: boolean;
    };

/**
 * The grant behind a stored connection, for the re-check. Its session start is the connect time: the token was
 * verified then, so a logout or password change before it had already refused the connect.
 */
export const grantOfViewer = (viewer: ViewerConnection): SseGrant => ({
  kind: viewer.credential.kind === 'session' ? 'user' : 'api_key',
  userId: viewer.userId,
  apiKeyId: viewer.credential.apiKeyId,
  sessionId: viewer.credential.sseSessionId,
  sessionStartedAt: Date.parse(viewer.connectedAt),
});

/**
 * The `$connect` of a viewer: the token verified as the SSE endpoints do it (INVALID_TOKEN), at most
 * `connectionsPerUser` open connections per user (RATE_LIMITED), then the connection stored until the API key's
 * expiry or the API's 2-hour limit, whichever comes first.
 */
export const connectViewer = async (
  deps: ViewerChannelDeps,
  token: string | undefined,
  connectionId: string,
): Promise<ViewerConnection> => {
  const { caller, grant } = await deps.auth.verify(token);
  const now = deps.clock.now();
  const open = (await deps.registry.connectionsOf(caller.userId)).filter(
    (c) => Date.parse(c.expiresAt) > now.getTime(),
  );
  if (open.length >= deps.connectionsPerUser) throw new TooManyViewersError(deps.connectionsPerUser);
  const keyExpiry = grant.apiKeyId === null ? null : await deps.auth.apiKeyExpiry(grant.apiKeyId);
  const limit = now.getTime() + VIEWER_MAX_LIFETIME_MS;
  const expiresAt = keyExpiry === null ? limit : Math.min(limit, Date.parse(keyExpiry));
  const connection: ViewerConnection = {
    connectionId,
    userId: caller.userId,
    tenantId: caller.tenantId,
    permissions: [...caller.permissions].sort(),
    credential: {
      kind: grant.kind === 'user' ? 'session' : 'api_key',
      sseSessionId: grant.sessionId,
      apiKeyId: grant.apiKeyId,
    },
    connectedAt: now.toISOString(),
    expiresAt: new Date(expiresAt).toISOString(),
  };
  await deps.registry.connect(connection);
  return connection;
};

/** Sends `closing` (unless the client is gone), closes the socket and forgets the connection. */
export const closeViewer = async (
  deps: Pick<ViewerChannelDeps, 'registry' | 'push'>,
  connectionId: string,
  reason: 'revoked' | 'expired',
): Promise<void> => {
  const sent = await deps.push.send(connectionId, { type: 'closing', reason });
  if (sent === 'sent') await deps.push.close(connectionId);
  await deps.registry.disconnect(connectionId);
};

/**
 * The stored connection a message comes from, checked as an open SSE stream re-checks itself: unknown is
 * INVALID_TOKEN; past its expiry or with a credential no longer valid it is closed (`closing`) and undefined is
 * answered (nothing else to send).
 */
export const liveViewer = async (
  deps: ViewerChannelDeps,
  connectionId: string,
): Promise<ViewerConnection | undefined> => {
  const viewer = await deps.registry.get(connectionId);
  if (viewer === undefined) throw new InvalidTokenError('This connection is no longer known; connect again.');
  if (Date.parse(viewer.expiresAt) <= deps.clock.now().getTime()) {
    await closeViewer(deps, connectionId, 'expired');
    return undefined;
  }
  if (!(await deps.auth.stillValid(grantOfViewer(viewer)))) {
    await closeViewer(deps, connectionId, 'revoked');
    return undefined;
  }
  return viewer;
};

/** The registry's topic of a request; a deployment named by its short id is resolved to its id (as subscribed). */
export const topicOf = async (
  deps: Pick<ViewerSubscribeDeps, 'deployments'>,
  viewer: ViewerConnection,
  request: TopicRequest,
): Promise<ViewerTopic> => {
  if (request.topic === 'deployment') {
    const found = await deps.deployments.find(request.deploymentId);
    return { kind: 'deployment', deploymentId: found?.id ?? request.deploymentId };
  }
  return {
    kind: 'resources',
    resourceType: request.resourceType,
    tenantId: viewer.tenantId ?? request.tenantId ?? null,
  };
};

/** Stops watching a topic (idempotent: a topic not watched is answered `unsubscribed` too). */
export const unsubscribeViewer = async (
  deps: ViewerSubscribeDeps,
  connectionId: string,
  request: TopicRequest,
  echo: { readonly ref?: string; readonly topic: Readonly<Record<string, unknown>> },
): Promise<void> => {
  const viewer = await liveViewer(deps, connectionId);
  if (viewer === undefined) return;
  await deps.registry.unsubscribe(connectionId, await topicOf(deps, viewer, request));
  await deps.push.send(connectionId, { type: 'unsubscribed', ...echo });
};

/** `ping` -> `pong` (a client pings every few minutes so API Gateway does not close it as idle). */
export const pingViewer = async (
  deps: Pick<ViewerChannelDeps, 'push'>,
  connectionId: string,
  ref: string | undefined,
): Promise<void> => {
  const pong: ViewerMessage = ref === undefined ? { type: 'pong' } : { type: 'pong', ref };
  await deps.push.send(connectionId, pong);
};

/** `$disconnect`: the connection and all its subscriptions are forgotten. */
export const disconnectViewer = (deps: Pick<ViewerChannelDeps, 'registry'>, connectionId: string): Promise<void> =>
  deps.registry.disconnect(connectionId);
