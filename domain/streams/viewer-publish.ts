// Deployment events pushed at the write (issue 36): once the event store has committed events, the writing process
// sends them to the deployment's viewer connections, one `events` message per connection per commit (split at 100
// events and 100 KB). The subscriber list is one registry query, cached per process for a second (also when empty),
// so a deployment nobody watches costs at most one query a second per writing process, and 50 viewers one query per
// commit, not 50. A connection that is gone is forgotten. The push never fails the write: its errors are logged and
// swallowed, and it is bounded by a short timeout (it is awaited: a Lambda may freeze once it answers).
import type { DeploymentEventStore, KeyedEventAppender, KeyedEventLookup, StoredEvent } from '../deployments/events.js';
import type { Clock } from '../shared/ports.js';
import { failureText, type Sleep, type Warn } from './ports.js';
import { eventsMessages, viewerEvent } from './viewer-messages.js';
import type { ViewerConnection, ViewerMessage, ViewerPush, ViewerRegistry } from './viewer-ports.js';

export interface ViewerPublishTiming {
  /** How long a deployment's subscriber list is reused before it is queried again. */
  readonly cacheMs: number;
  /** The whole push of one commit gives up after this long (the write does not wait longer). */
  readonly timeoutMs: number;
}

export const VIEWER_PUBLISH_TIMING: ViewerPublishTiming = { cacheMs: 1_000, timeoutMs: 1_000 };

export interface ViewerPublishDeps {
  readonly registry: Pick<ViewerRegistry, 'subscribers' | 'disconnect'>;
  readonly push: Pick<ViewerPush, 'send'>;
  readonly clock: Clock;
  readonly warn: Warn;
  /** Resolves after the given time unless the signal aborts first (the push's bound). */
  readonly wait: Sleep;
}

/** Sends what a writer committed to whoever watches; never throws. */
export interface EventPublisher {
  publish(deploymentId: string, stored: readonly StoredEvent[]): Promise<void>;
}

/** A deployment's subscribers as last read, and until when they are reused. */
interface Cached {
  readonly until: number;
  subscribers: Promise<readonly ViewerConnection[]>;
  /** The list once read: a writer nobody watches then returns at once, without waiting a turn. */
  known?: readonly ViewerConnection[];
}

/** Past this many cached deployments, the expired ones are dropped on the next read. */
const CACHE_PRUNE_SIZE = 1_000;

/** The publisher of one process (its subscriber cache lives as long as it does). */
export const viewerPublisher = (
  deps: ViewerPublishDeps,
  timing: ViewerPublishTiming = VIEWER_PUBLISH_TIMING,
): EventPublisher => {
  const cache = new Map<string, Cached>();

  const subscribersOf = (deploymentId: string): Promise<readonly ViewerConnection[]> => {
    const now = deps.clock.now().getTime();
    const cached = cache.get(deploymentId);
    if (cached !== undefined && cached.until > now) return cached.subscribers;
    if (cache.size >= CACHE_PRUNE_SIZE) for (const [id, entry] of cache) if (entry.until <= now) cache.delete(id);
    // The promise is cached, so concurrent writers of one deployment share one query; a failed one is not kept.
    const subscribers = deps.registry.subscribers({ kind: 'deployment', deploymentId });
    const entry: Cached = { until: now + timing.cacheMs, subscribers };
    cache.set(deploymentId, entry);
    subscribers.then(
      (list) => {
        entry.known = list;
      },
      () => {
        if (cache.get(deploymentId) === entry) cache.delete(deploymentId);
      },
    );
    return subscribers;
  };

  /** Forgets a connection API Gateway no longer has: in the registry, and in the cached list. */
  const forget = async (deploymentId: string, connectionId: string): Promise<void> => {
    const entry = cache.get(deploymentId);
    if (entry !== undefined) {
      entry.subscribers = entry.subscribers.then((all) => all.filter((c) => c.connectionId !== connectionId));
      entry.known = entry.known?.filter((c) => c.connectionId !== connectionId);
    }
    await deps.registry.disconnect(connectionId);
  };

  const sendTo = async (deploymentId: string, connection: ViewerConnection, messages: readonly ViewerMessage[]) => {
    try {
      for (const message of messages)
        if ((await deps.push.send(connection.connectionId, message)) === 'gone') {
          await forget(deploymentId, connection.connectionId);
          return;
        }
    } catch (error) {
      deps.warn('viewer push: a send failed', {
        deployment_id: deploymentId,
        connection_id: connection.connectionId,
        error: failureText(error),
      });
    }
  };

  const pushAll = async (deploymentId: string, stored: readonly StoredEvent[]): Promise<void> => {
    const subscribers = await subscribersOf(deploymentId);
    if (subscribers.length === 0) return;
    const messages = eventsMessages(deploymentId, stored.map(viewerEvent));
    await Promise.all(subscribers.map((connection) => sendTo(deploymentId, connection, messages)));
  };

  /** The push of one batch, bounded by the timeout; never throws. */
  const bounded = async (deploymentId: string, stored: readonly StoredEvent[]): Promise<void> => {
    const stop = new AbortController();
    const timedOut = deps.wait(timing.timeoutMs, stop.signal).then(
      () => 'timeout' as const,
      () => 'aborted' as const,
    );
    try {
      const outcome = await Promise.race([pushAll(deploymentId, stored).then(() => 'done' as const), timedOut]);
      if (outcome === 'timeout')
        deps.warn('viewer push: gave up waiting', { deployment_id: deploymentId, timeout_ms: timing.timeoutMs });
    } catch (error) {
      deps.warn('viewer push failed', { deployment_id: deploymentId, error: failureText(error) });
    } finally {
      stop.abort();
    }
  };

  // Callers resolved by one round of the store's group commit publish in the same turn: their events go out together
  // (one message per connection, in seq order), and each caller waits for that push.
  const batches = new Map<string, StoredEvent[]>();
  const flushes = new Map<string, Promise<void>>();
  return {
    publish(deploymentId, stored) {
      if (stored.length === 0) return Promise.resolve();
      const cached = cache.get(deploymentId);
      if (cached?.known?.length === 0 && cached.until > deps.clock.now().getTime()) return Promise.resolve();
      const batch = batches.get(deploymentId);
      if (batch !== undefined) {
        batch.push(...stored);
        return flushes.get(deploymentId) ?? Promise.resolve();
      }
      const events = [...stored];
      batches.set(deploymentId, events);
      const flush = deps
        .wait(0, new AbortController().signal)
        .catch(() => undefined)
        .then(() => {
          batches.delete(deploymentId);
          flushes.delete(deploymentId);
          return bounded(
            deploymentId,
            events.sort((a, b) => a.seq - b.seq),
          );
        });
      flushes.set(deploymentId, flush);
      return flush;
    },
  };
};

/**
 * The event store, its appends followed by the push of what they stored. Every writer (engine, agent output and
 * completion, cancel, sweep, analysis) goes through `append` or `appendOnce`, and each call answers exactly the
 * events it committed (keyed groups merged by another writer included: see infra/dynamodb/event-parking.ts), so every
 * committed event is pushed by the writer that asked for it.
 */
export const publishingEvents = (
  store: DeploymentEventStore & KeyedEventAppender & KeyedEventLookup,
  publisher: EventPublisher,
): DeploymentEventStore & KeyedEventAppender & KeyedEventLookup => ({
  async append(deploymentId, events) {
    const stored = await store.append(deploymentId, events);
    await publisher.publish(deploymentId, stored);
    return stored;
  },
  async appendOnce(deploymentId, groups) {
    const stored = await store.appendOnce(deploymentId, groups);
    await publisher.publish(deploymentId, stored);
    return stored;
  },
  after: (deploymentId, seq, limit) => store.after(deploymentId, seq, limit),
  page: (deploymentId, offset, limit) => store.page(deploymentId, offset, limit),
  keyedSeq: (deploymentId, key) => store.keyedSeq(deploymentId, key),
  last: (deploymentId) => store.last(deploymentId),
});
