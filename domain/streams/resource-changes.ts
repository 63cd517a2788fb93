// A resource stream's run: the caller checked and the first listing taken (before the stream opens, so every change
// after its ping is reported), then each look's views compared with the previous ones, every change one message
// {event, data: {type, resource_type, id, record}} with a per-connection id. A look every second while things
// change, every 2 s after 10 s without a change (poll-backoff.ts); pings after silence; the stream ends
// itself before the function's time limit and after a few failed looks in a row. The HTTP side frames the items.
import { NotFoundError } from '../errors.js';
import { authorize } from '../identity/authenticate.js';
import type { Clock } from '../shared/ports.js';
import { commentItem, failureText, messageItem, retryItem, type PollRuntime, type StreamItem } from './ports.js';
import { diffViews, type ResourceChange } from './resource-diff.js';
import {
  isResourceType,
  type NextViews,
  type ResourceSource,
  type ResourceStreamDeps,
  type ResourceType,
  type ResourceView,
  type Watcher,
} from './resource-sources.js';
import type { StreamCaller } from './guard.js';
import { nextPollMs, type PollBackoff } from './poll-backoff.js';

/** The message of one change: {event, data: {type, resource_type, id, record}}. */
export const changeMessage = (resourceType: ResourceType, change: ResourceChange<ResourceView>) => ({
  event: change.event,
  data: { type: change.event, resource_type: resourceType, id: change.id, record: change.record },
});

export const PING = { event: 'ping', data: { type: 'ping' } } as const;

export interface ResourceStreamTiming {
  /** How often the change feed is read while things change. */
  readonly pollMs: number;
  /** Without a change for this long, the wait between looks doubles after each empty one... */
  readonly quietAfterMs: number;
  /** ...up to this. */
  readonly quietPollMs: number;
  /** A ping after this much silence. */
  readonly pingMs: number;
  /** The stream ends itself after this long (the function may run 900 s). */
  readonly maxMs: number;
  /** The `retry:` hint: how long a client waits before reconnecting. */
  readonly retryMs: number;
}

// A list nobody changes is read every 2 s instead of every second (docs/cost.md, issue 36); the console's lists are
// served by the viewer channel, these streams by API clients.
export const RESOURCE_STREAM_TIMING: ResourceStreamTiming = {
  pollMs: 1_000,
  quietAfterMs: 10_000,
  quietPollMs: 2_000,
  pingMs: 15_000,
  maxMs: 14 * 60_000,
  retryMs: 2_000,
};

/** Consecutive listing failures an open stream rides out (with backoff) before it ends and lets the client reconnect. */
const MAX_FAILURES = 5;

export interface ResourceFeed {
  readonly resourceType: ResourceType;
  /** The listing the stream starts from (taken before the ping). */
  readonly initial: ReadonlyMap<string, ResourceView>;
  /** The views now, from the previous ones (the change feed applied). */
  readonly next: NextViews;
  readonly fingerprint?: ((view: ResourceView) => string) | undefined;
  /** Send `initial` as `created` messages after the ping. */
  readonly snapshot: boolean;
  /** A record not seen yet that existed before the stream opened: its first change is an update (not listed). */
  readonly existedBefore?: ((view: ResourceView) => boolean) | undefined;
}

/** The type of `GET /api/v1/sse/{resource_type}`; not found when it is none of RESOURCE_TYPES. */
export const resourceTypeOf = (value: string): ResourceType => {
  if (!isResourceType(value)) throw new NotFoundError('Resource stream', value);
  return value;
};

export interface ResourceStreamRequest {
  readonly resourceType: ResourceType;
  readonly token: string | undefined;
  readonly snapshot: boolean;
  /** `?tenant_id=`: narrows a global caller's stream to one tenant (ignored for a tenant's caller). */
  readonly tenantId: string | undefined;
}

/**
 * The caller and the feed of a resource stream. The listing is taken before the stream opens: a failure there is an
 * error answer, and the ping means "watching".
 */
export const openResourceFeed = async (
  deps: ResourceStreamDeps,
  sources: Readonly<Record<ResourceType, ResourceSource>>,
  request: ResourceStreamRequest,
): Promise<{ readonly caller: StreamCaller; readonly feed: ResourceFeed }> => {
  const { resourceType, snapshot } = request;
  const caller = await deps.verify(request.token);
  const source = sources[resourceType];
  authorize(caller, source.permission);
  const watcher: Watcher = { caller, tenantId: caller.tenantId === null ? request.tenantId : undefined };
  const listedAt = deps.clock.now();
  const existedBefore = source.existedBefore;
  const listed = snapshot || existedBefore === undefined;
  const initial = listed ? await source.list(deps, watcher) : new Map<string, ResourceView>();
  const feed: ResourceFeed = {
    resourceType,
    initial,
    next: source.follow(deps, watcher, listedAt),
    fingerprint: source.fingerprint,
    snapshot,
    existedBefore: listed || existedBefore === undefined ? undefined : (view) => existedBefore(view, listedAt),
  };
  return { caller, feed };
};

/**
 * The items of one resource stream: the retry hint and a ping, the snapshot if asked, then the changes of each
 * listing against the one before. Ends at `timing.maxMs` (with a retry hint), after MAX_FAILURES failed listings
 * in a row, or when `signal` aborts.
 */
export async function* followResourceChanges(
  clock: Clock,
  feed: ResourceFeed,
  signal: AbortSignal,
  timing: ResourceStreamTiming,
  runtime: PollRuntime,
): AsyncGenerator<StreamItem> {
  const now = () => clock.now().getTime();
  const started = now();
  let lastWrite = started;
  let messageId = 0;
  let failures = 0;
  let changedAt = started;
  const backoff: PollBackoff = { fastMs: timing.pollMs, quietAfterMs: timing.quietAfterMs, maxMs: timing.quietPollMs };
  let waitMs = timing.pollMs;
  let previous = feed.initial;
  const send = (change: ResourceChange<ResourceView>) => {
    messageId += 1;
    lastWrite = now();
    return messageItem(changeMessage(feed.resourceType, change), messageId);
  };
  yield retryItem(timing.retryMs);
  yield messageItem(PING);
  if (feed.snapshot) for (const [id, record] of previous) yield send({ event: 'created', id, record });
  while (!signal.aborted) {
    if (now() - started >= timing.maxMs) {
      yield retryItem(timing.retryMs);
      yield commentItem(
        'this stream ends before the platform limit: reconnect with a new sse_token (and snapshot=true)',
      );
      return;
    }
    if (now() - lastWrite >= timing.pingMs) {
      yield messageItem(PING);
      lastWrite = now();
    }
    try {
      await runtime.wait(failures > 0 ? timing.pollMs * 2 ** failures : waitMs, signal);
      const next = await feed.next(previous);
      failures = 0;
      const changes = diffViews(previous, next, feed.fingerprint).map((change) =>
        change.event === 'created' && feed.existedBefore?.(change.record) === true
          ? { ...change, event: 'updated' as const }
          : change,
      );
      previous = next;
      if (changes.length > 0) changedAt = now();
      waitMs = nextPollMs(backoff, waitMs, now() - changedAt);
      for (const change of changes) yield send(change);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      runtime.warn('resource stream: listing failed', {
        resource_type: feed.resourceType,
        failures,
        error: failureText(error),
      });
      if (failures >= MAX_FAILURES) {
        yield retryItem(timing.retryMs);
        return;
      }
    }
  }
}
