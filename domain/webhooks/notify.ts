// Emitting events: called where each happens (the engine, the outbox, the dispatcher, the agent socket, the
// analyzer). What an event costs: nothing but a look in this container's cache when no subscription of the tenant
// (or a global one) wants the type; the cache is refreshed by one query per scope at most every few seconds, only
// when events happen. With a listener: the record's view built and one SQS message; the consumer fans out.
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

/** An emitter with its per-container cache of "which types does scope X want". */
export const webhookEmitter = (deps: EmitterDeps): WebhookEmitter => {
  const cache = new Map<string, { readonly until: number; readonly types: ReadonlySet<string> }>();
  const wanted = async (tenantId: string | null): Promise<ReadonlySet<string>> => {
    const key = tenantId ?? '';
    const now = deps.clock.now().getTime();
    const hit = cache.get(key);
    if (hit !== undefined && hit.until > now) return hit.types;
    const list = await deps.subscriptions.listByTenant(tenantId);
    const types = new Set(list.filter((s) => s.enabled).flatMap((s) => s.eventTypes));
    if (deps.cacheMs > 0) cache.set(key, { until: now + deps.cacheMs, types });
    return types;
  };
  const listens = async (type: EventType, tenantId: string | null) =>
    (await wanted(null)).has(type) || (tenantId !== null && (await wanted(tenantId)).has(type));
  return {
    listens,
    async emit(emission) {
      if (!(await listens(emission.type, emission.tenantId))) return;
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
