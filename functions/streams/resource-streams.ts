// stream -> verifySseToken -> list the resource once -> follow the change feed (polled) -> diffViews
//
// GET /api/v1/sse/{resource_type}?sse_token=... (decisions.md "Events and live streams"): the changes of
// `deployments`, `pending_deployments` or `targets` the caller may see. Targets and pending requests are listed
// once, deployments only for a snapshot; after that each poll reads only what the change feed (gsi3) says was
// written since the last look, so an idle stream costs one small query a second whatever the table holds. Each
// message is one `data:` line of {event, data}, `event` one of ping, created, updated, deleted and `data`
// {type: event, resource_type, id, record} (`record` = the resource's list view; for deleted, the last one seen).
// The first listing is taken before the ping, so every change after the ping is reported; `?snapshot=true` sends
// the records of that listing as `created` first. `id:` counts the connection's messages (no resuming).
import { setTimeout as pause } from 'node:timers/promises';
import * as v from 'valibot';
import type { PendingRequestRepository, DeploymentRepository } from '../../domain/deployments/ports.js';
import { listPendingRequests } from '../../domain/deployments/queries.js';
import { deploymentView } from '../../domain/deployments/views.js';
import { NotFoundError } from '../../domain/errors.js';
import { authorize } from '../../domain/identity/authenticate.js';
import { InvalidTokenError } from '../../domain/identity/errors.js';
import type { Permission } from '../../domain/identity/permissions.js';
import type { Caller } from '../../domain/identity/types.js';
import type { ChangeFeed, ChangedRecord, Clock } from '../../domain/shared/ports.js';
import type { TargetRepository } from '../../domain/targets/ports.js';
import type { Target } from '../../domain/targets/types.js';
import { targetViewWithAgent } from '../../domain/targets/views.js';
import { SERVER_VERSION } from '../shared/version.js';
import { agentRelease } from '../../infra/config.js';
import { logger } from '../shared/logger.js';
import { Uuid } from '../shared/schemas.js';
import { sseComment, sseMessage, sseRetry } from '../shared/sse.js';
import { stream } from '../shared/stream.js';
import { guardedStream, type StreamCaller, type StreamGuardDeps } from '../shared/stream-guard.js';
import { resourceStreamDeps } from '../shared/stream-wiring.js';
import { diffViews, stableJson, type ResourceChange } from './resource-diff.js';

export interface ResourceStreamDeps {
  /** `?sse_token=` -> the caller, once (the token is single use), with the re-check an open stream repeats. */
  readonly verify: (token: string | undefined) => Promise<StreamCaller>;
  /** Open streams per user and the re-check; absent in tests that do not need them. */
  readonly guard?: StreamGuardDeps;
  readonly deployments: Pick<DeploymentRepository, 'listAll' | 'getMany'>;
  readonly pending: PendingRequestRepository;
  readonly targets: Pick<TargetRepository, 'listAll' | 'getMany'>;
  readonly changes: ChangeFeed;
  readonly clock: Clock;
}

export const RESOURCE_TYPES = ['deployments', 'pending_deployments', 'targets'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export const isResourceType = (value: string): value is ResourceType =>
  (RESOURCE_TYPES as readonly string[]).includes(value);

/** A record as the stream sends it: the resource's list view. */
export type ResourceView = Readonly<Record<string, unknown>> & { readonly id: string };

/** Who is watching: the caller, and (global callers only) the `?tenant_id=` they narrowed the stream to. */
export interface Watcher {
  readonly caller: Caller;
  readonly tenantId?: string | undefined;
}

/** A tenant-scoped caller sees only its tenant's records (not global ones); a global caller all, or one tenant's. */
export const watches = (watcher: Watcher, record: { readonly tenantId: string | null }): boolean =>
  watcher.caller.tenantId === null
    ? watcher.tenantId === undefined || record.tenantId === watcher.tenantId
    : record.tenantId === watcher.caller.tenantId;

const byCreation = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
  a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);

const keyed = (views: readonly ResourceView[]): ReadonlyMap<string, ResourceView> =>
  new Map(views.map((view) => [view.id, view]));

/** The next views of a followed resource, from the previous ones. */
export type NextViews = (previous: ReadonlyMap<string, ResourceView>) => Promise<ReadonlyMap<string, ResourceView>>;

interface ResourceSource {
  readonly permission: Permission;
  /** The views the watcher may see, oldest first. */
  readonly list: (deps: ResourceStreamDeps, watcher: Watcher) => Promise<ReadonlyMap<string, ResourceView>>;
  /**
   * Follows the resource from a listing taken at `listedAt`: each call reads the change feed since the last one and
   * answers the views with what changed applied (records read by id, in batches), without listing again.
   */
  readonly follow: (deps: ResourceStreamDeps, watcher: Watcher, listedAt: Date) => NextViews;
  /** What counts as a change (the default: the whole view). */
  readonly fingerprint?: (view: ResourceView) => string;
  /**
   * Without a snapshot the stream starts from no listing at all (a table of any size opens at once): a changed record
   * it has not seen is `updated` when it existed before the stream opened, else `created`.
   */
  readonly existedBefore?: (view: ResourceView, listedAt: Date) => boolean;
}

/**
 * The change feed is eventually consistent (a GSI) and writers' clocks differ by a little: each look reads back this
 * far before the previous look, and skips the entries it already saw.
 */
export const LOOK_BACK_MS = 5_000;

/**
 * The watched entries the feed lists since the previous look (minus LOOK_BACK_MS), each entry once: `apply` gets
 * them, and only once it succeeded do they count as seen (a failed read of the records is tried again).
 */
export const changedSince = (
  deps: Pick<ResourceStreamDeps, 'changes' | 'clock'>,
  resource: ResourceType,
  watcher: Watcher,
  listedAt: Date,
) => {
  let lookedAt = listedAt.getTime();
  const seen = new Map<string, number>();
  return async <T>(apply: (fresh: readonly ChangedRecord[]) => Promise<T>): Promise<T> => {
    const from = lookedAt - LOOK_BACK_MS;
    const now = deps.clock.now().getTime();
    const entries = (await deps.changes.since(resource, new Date(from).toISOString())).filter(
      (entry) => !seen.has(`${entry.at}#${entry.id}`),
    );
    const result = await apply(entries.filter((entry) => watches(watcher, entry)));
    lookedAt = now;
    for (const entry of entries) seen.set(`${entry.at}#${entry.id}`, Date.parse(entry.at));
    for (const [key, at] of seen) if (at < from) seen.delete(key);
    return result;
  };
};

const ids = (entries: readonly ChangedRecord[]) => [...new Set(entries.map((e) => e.id))];

export const RESOURCE_SOURCES: Readonly<Record<ResourceType, ResourceSource>> = {
  deployments: {
    permission: 'deployments:read',
    list: async (deps, watcher) =>
      keyed(
        (await deps.deployments.listAll())
          .filter((d) => watches(watcher, d))
          .sort(byCreation)
          .map(deploymentView),
      ),
    existedBefore: (view, listedAt) =>
      typeof view['created_at'] === 'string' && Date.parse(view['created_at']) < listedAt.getTime() - LOOK_BACK_MS,
    // The changed deployments, read by id; a new one goes last (it is the newest).
    follow: (deps, watcher, listedAt) => {
      const look = changedSince(deps, 'deployments', watcher, listedAt);
      return (previous) =>
        look(async (fresh) => {
          if (fresh.length === 0) return previous;
          const found = new Map((await deps.deployments.getMany(ids(fresh))).map((d) => [d.id, d] as const));
          const next = new Map(previous);
          for (const id of ids(fresh)) {
            const deployment = found.get(id);
            if (deployment !== undefined && watches(watcher, deployment)) next.set(id, deploymentView(deployment));
            else next.delete(id);
          }
          return next;
        });
    },
  },
  pending_deployments: {
    permission: 'pending_deployments:read',
    // The list endpoint's views and tenant rule (queue_position while pending), oldest first.
    list: async (deps, watcher) =>
      keyed((await listPendingRequests(deps, watcher.caller, { tenant_id: watcher.tenantId })).reverse()),
    // One request moving changes the queue positions of the others: listed again, but only after a change.
    follow: (deps, watcher, listedAt) => {
      const look = changedSince(deps, 'pending_deployments', watcher, listedAt);
      return (previous) =>
        look(async (fresh) =>
          fresh.length === 0 ? previous : RESOURCE_SOURCES.pending_deployments.list(deps, watcher),
        );
    },
  },
  targets: {
    permission: 'targets:read',
    // `status` follows the clock, so a target going stale or offline is an update.
    list: async (deps, watcher) => {
      const now = deps.clock.now();
      return keyed(
        (await deps.targets.listAll())
          .filter((t) => watches(watcher, t))
          .sort(byCreation)
          .map((t) => targetViewWithAgent(t, now, SERVER_VERSION, agentRelease())),
      );
    },
    // The records are kept, so the status is worked out again on every look (the clock moves it without a write);
    // changed targets are read by id, a deleted one's tombstone on the feed removes it.
    follow: (deps, watcher, listedAt) => {
      const look = changedSince(deps, 'targets', watcher, listedAt);
      let records: Map<string, Target> | undefined;
      return async () => {
        records ??= new Map(
          (await deps.targets.listAll())
            .filter((t) => watches(watcher, t))
            .sort(byCreation)
            .map((t) => [t.id, t] as const),
        );
        const known = records;
        await look(async (fresh) => {
          if (fresh.length === 0) return;
          const found = new Map((await deps.targets.getMany(ids(fresh))).map((t) => [t.id, t] as const));
          for (const id of ids(fresh)) {
            const target = found.get(id);
            if (target !== undefined && watches(watcher, target)) known.set(id, target);
            else known.delete(id);
          }
        });
        const now = deps.clock.now();
        return keyed([...known.values()].map((t) => targetViewWithAgent(t, now, SERVER_VERSION, agentRelease())));
      };
    },
    // A heartbeat alone (every 15 s per agent) is not a change; the status it keeps or moves is.
    fingerprint: ({ last_heartbeat_at: _heartbeat, ...rest }) => stableJson(rest),
  },
};

/** The message of one change: {event, data: {type, resource_type, id, record}}. */
export const changeMessage = (resourceType: ResourceType, change: ResourceChange<ResourceView>) => ({
  event: change.event,
  data: { type: change.event, resource_type: resourceType, id: change.id, record: change.record },
});

export const PING = { event: 'ping', data: { type: 'ping' } } as const;

export interface ResourceStreamTiming {
  /** How often the resource is listed. */
  readonly pollMs: number;
  /** A ping after this much silence. */
  readonly pingMs: number;
  /** The stream ends itself after this long (the function may run 900 s). */
  readonly maxMs: number;
  /** The `retry:` hint: how long a client waits before reconnecting. */
  readonly retryMs: number;
}

export const RESOURCE_STREAM_TIMING: ResourceStreamTiming = {
  pollMs: 1_000,
  pingMs: 15_000,
  maxMs: 14 * 60_000,
  retryMs: 2_000,
};

/** Consecutive listing failures an open stream rides out (with backoff) before it ends and lets the client reconnect. */
const MAX_FAILURES = 5;

export type Sleep = (milliseconds: number, signal: AbortSignal) => Promise<void>;
const sleep: Sleep = (milliseconds, signal) => pause(milliseconds, undefined, { signal });

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

/**
 * The frames of one resource stream: the retry hint and a ping, the snapshot if asked, then the changes of each
 * listing against the one before. Ends at `timing.maxMs` (with a retry hint), after MAX_FAILURES failed listings
 * in a row, or when `signal` aborts.
 */
export async function* resourceFrames(
  clock: Clock,
  feed: ResourceFeed,
  signal: AbortSignal,
  timing: ResourceStreamTiming = RESOURCE_STREAM_TIMING,
  wait: Sleep = sleep,
): AsyncGenerator<string> {
  const now = () => clock.now().getTime();
  const started = now();
  let lastWrite = started;
  let messageId = 0;
  let failures = 0;
  let previous = feed.initial;
  const send = (change: ResourceChange<ResourceView>) => {
    messageId += 1;
    lastWrite = now();
    return sseMessage(changeMessage(feed.resourceType, change), messageId);
  };
  yield sseRetry(timing.retryMs);
  yield sseMessage(PING);
  if (feed.snapshot) for (const [id, record] of previous) yield send({ event: 'created', id, record });
  while (!signal.aborted) {
    if (now() - started >= timing.maxMs) {
      yield sseRetry(timing.retryMs);
      yield sseComment(
        'this stream ends before the platform limit: reconnect with a new sse_token (and snapshot=true)',
      );
      return;
    }
    if (now() - lastWrite >= timing.pingMs) {
      yield sseMessage(PING);
      lastWrite = now();
    }
    try {
      await wait(timing.pollMs * 2 ** failures, signal);
      const next = await feed.next(previous);
      failures = 0;
      const changes = diffViews(previous, next, feed.fingerprint).map((change) =>
        change.event === 'created' && feed.existedBefore?.(change.record) === true
          ? { ...change, event: 'updated' as const }
          : change,
      );
      previous = next;
      for (const change of changes) yield send(change);
    } catch (error) {
      if (signal.aborted) return;
      failures += 1;
      logger.warn('resource stream: listing failed', {
        resource_type: feed.resourceType,
        failures,
        error: error instanceof Error ? error.message : String(error),
      });
      if (failures >= MAX_FAILURES) {
        yield sseRetry(timing.retryMs);
        return;
      }
    }
  }
}

const Params = v.object({ resource_type: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });

const Query = v.object({
  sse_token: v.optional(v.string()),
  snapshot: v.optional(
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((value) => value === 'true'),
    ),
  ),
  tenant_id: v.optional(Uuid),
});

export const makeHandler = (deps: () => ResourceStreamDeps, timing: ResourceStreamTiming = RESOURCE_STREAM_TIMING) =>
  stream(
    {
      operationId: 'stream_resource_changes',
      summary:
        'Changes of deployments, pending_deployments or targets live (Server-Sent Events); ?sse_token= only, ?snapshot=true sends the current records first',
      tags: ['events'],
      permission: 'authenticated',
      params: Params,
      query: Query,
      responses: {
        200: {
          description:
            'An event stream: one `data:` line of {event, data} per message (ping, created, updated, deleted), `id:` a per-connection counter',
        },
        401: {
          description:
            'INVALID_TOKEN: no, unknown, expired or used sse_token (the Authorization header is not accepted)',
        },
        403: {
          description:
            'INSUFFICIENT_PERMISSIONS: deployments:read, pending_deployments:read or targets:read, by resource type',
        },
        404: { description: 'NOT_FOUND: resource_type is not deployments, pending_deployments or targets' },
        429: {
          description: 'Plain text, Retry-After: the general rate limit, or STREAMS_PER_USER streams already open',
        },
      },
    },
    async ({ params, query, headers }) => {
      // An unknown type is checked first, so a mistyped path does not use up the single-use token.
      const resourceType = params.resource_type;
      if (!isResourceType(resourceType)) throw new NotFoundError('Resource stream', resourceType);
      if (query.sse_token === undefined && headers['authorization'] !== undefined) {
        throw new InvalidTokenError(
          'Event streams do not accept the Authorization header: pass ?sse_token= from POST /api/v1/auth/sse-token.',
        );
      }
      const caller = await deps().verify(query.sse_token);
      const source = RESOURCE_SOURCES[resourceType];
      authorize(caller, source.permission);
      const watcher: Watcher = { caller, tenantId: caller.tenantId === null ? query.tenant_id : undefined };
      // Listed before the stream opens: a failure here is a JSON envelope, and the ping means "watching".
      const listedAt = deps().clock.now();
      const snapshot = query.snapshot ?? false;
      const existedBefore = source.existedBefore;
      const listed = snapshot || existedBefore === undefined;
      const initial = listed ? await source.list(deps(), watcher) : new Map<string, ResourceView>();
      const feed: ResourceFeed = {
        resourceType,
        initial,
        next: source.follow(deps(), watcher, listedAt),
        fingerprint: source.fingerprint,
        snapshot,
        existedBefore: listed || existedBefore === undefined ? undefined : (view) => existedBefore(view, listedAt),
      };
      return guardedStream(deps().guard, caller, (signal) => resourceFrames(deps().clock, feed, signal, timing));
    },
  );

export const handler = makeHandler(resourceStreamDeps);
