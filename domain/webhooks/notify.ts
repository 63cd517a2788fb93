// Emitting events: called where each happens (the engine, the outbox, the dispatcher, the agent socket, the
// analyzer). What an event costs: nothing but a look in this container's cache when no subscription of the tenant
// (or a global one) wants the type; the cache is refreshed by one query per scope at most every few seconds, only
// when events happen. With a listener: the record's view built and one SQS message; the consumer fans out.
// A subscription is heard by the work created after its answer, in every container (issue 30): an event says when
// its work was created (`since`), and a look taken before that (and the index's lag) is read again; so new work
// costs each container that tells about it one query per scope for its first events, and old work nothing more.
// An event has a deterministic id (events.ts), so emitting it again (a retry) makes no second delivery.
import type { Clock } from '../shared/ports.js';
import { eventId, type EventType, type SubscribableType } from './events.js';
import type { SubscriptionRepository, WebhookQueue } from './ports.js';

export interface Emission {
  readonly type: SubscribableType;
  /** What makes the id unique with the type: the record id (and e.g. a connection id). */
  readonly subject: readonly string[];
  readonly tenantId: string | null;
  readonly timestamp: string;
  /**
   * When the work the event is about was created (ISO 8601): a cached look older than that (plus the index's lag) is
   * not trusted, so a subscription answered before the work was created hears it. Absent: the cache time alone.
   */
  readonly since?: string;
  /** The record as the API shows it; built only when someone listens. */
  readonly data: () => unknown;
}

export interface WebhookEmitter {
  emit(emission: Emission): Promise<void>;
  /** Whether anyone may listen to `type` from `tenantId` (cheap: the cache); lets a caller skip building data. */
  listens(type: EventType, tenantId: string | null): Promise<boolean>;
}

export interface EmitterDeps {
  readonly subscriptions: Pick<SubscriptionRepository, 'listByTenant'>;
  readonly queue: WebhookQueue;
  readonly clock: Clock;
  /** How long a container trusts what it read (WEBHOOK_CACHE_SECONDS; 0 reads every time). */
  readonly cacheMs: number;
}

/**
 * How long after a subscription write the tenant's list (a DynamoDB global secondary index, eventually consistent)
 * may still miss it: a look must be taken this long after the work was created to answer for its events.
 */
export const SUBSCRIPTION_INDEX_LAG_MS = 1000;

/** What a container read about one scope's subscriptions, and when it started reading (epoch ms). */
export interface Look {
  readonly readAt: number;
  readonly types: ReadonlySet<string>;
}

/**
 * Whether a cached look answers whether `type` is wanted, at `now`, for work created at `since` (epoch ms). Only
 * within the cache time. A "yes" then always answers (the consumer reads the subscriptions again when it fans out,
 * so a stale yes costs one message, never a wrong delivery). A "no" answers only when the look was taken after the
 * work was created (plus the index's lag): it saw every subscription whose write was answered before the work was
 * created, whichever container wrote it.
 */
export const lookServes = (look: Look, type: string, now: number, cacheMs: number, since?: number): boolean =>
  now - look.readAt < cacheMs &&
  (look.types.has(type) || since === undefined || look.readAt >= since + SUBSCRIPTION_INDEX_LAG_MS);

/** An emitter with its per-container cache of "which types does scope X want". */
export const webhookEmitter = (deps: EmitterDeps): WebhookEmitter => {
  const cache = new Map<string, Look>();
  const wanted = async (tenantId: string | null, type: string, since?: number): Promise<ReadonlySet<string>> => {
    const key = tenantId ?? '';
    const now = deps.clock.now().getTime();
    const hit = cache.get(key);
    if (hit !== undefined && lookServes(hit, type, now, deps.cacheMs, since)) return hit.types;
    const list = await deps.subscriptions.listByTenant(tenantId);
    const types = new Set(list.filter((s) => s.enabled).flatMap((s) => s.eventTypes));
    if (deps.cacheMs > 0) cache.set(key, { readAt: now, types });
    return types;
  };
  const heard = async (type: EventType, tenantId: string | null, since?: number) =>
    (await wanted(null, type, since)).has(type) ||
    (tenantId !== null && (await wanted(tenantId, type, since)).has(type));
  return {
    listens: (type, tenantId) => heard(type, tenantId),
    async emit(emission) {
      const since = emission.since === undefined ? undefined : Date.parse(emission.since);
      if (!(await heard(emission.type, emission.tenantId, Number.isNaN(since) ? undefined : since))) return;
      await deps.queue.send({
        kind: 'event',
        event: {
          id: eventId(emission.type, ...emission.subject),
          type: emission.type,
          tenantId: emission.tenantId,
          timestamp: emission.timestamp,
          data: await emission.data(),
        },
      });
    },
  };
};

/** An emitter that emits nothing (contexts wired without webhooks, tests). */
export const silentEmitter: WebhookEmitter = { emit: async () => undefined, listens: async () => false };
