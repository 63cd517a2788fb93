// The resources a resource stream (GET /api/v1/sse/{resource_type}) can follow, and how each is followed: the
// permission it needs, the first listing of the views the watcher may see, and the change feed (gsi3) read since
// the last look, applied to the views without listing again (decisions.md "Events and live streams").
import type { PendingRequestRepository, DeploymentRepository } from '../deployments/ports.js';
import { listPendingRequests } from '../deployments/queries.js';
import { deploymentView } from '../deployments/views.js';
import type { Permission } from '../identity/permissions.js';
import type { Caller } from '../identity/types.js';
import type { ChangeFeed, ChangedRecord, Clock } from '../shared/ports.js';
import type { AgentRelease } from '../targets/agent-release.js';
import type { TargetRepository } from '../targets/ports.js';
import type { Target } from '../targets/types.js';
import { targetViewWithAgent } from '../targets/views.js';
import type { StreamCaller, StreamGuardDeps } from './guard.js';
import { stableJson } from './resource-diff.js';

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

/** What a listing reads (the SSE streams' deps, and the viewer channel's snapshot). */
export type ResourceListDeps = Pick<ResourceStreamDeps, 'deployments' | 'pending' | 'targets' | 'clock'>;

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

export interface ResourceSource {
  readonly permission: Permission;
  /** The views the watcher may see, oldest first. */
  readonly list: (deps: ResourceListDeps, watcher: Watcher) => Promise<ReadonlyMap<string, ResourceView>>;
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

/** The versions a target's view compares its agent with. */
export interface ShippedVersions {
  readonly server: string;
  /** The agent release the service ships (null: none), read when a view is made. */
  readonly agentRelease: () => AgentRelease | null;
}

/** A target's list view at `now`, its agent compared with `versions` (the resource streams' and the channel's). */
export const targetListView =
  (versions: ShippedVersions) =>
  (target: Target, now: Date): ResourceView =>
    targetViewWithAgent(target, now, versions.server, versions.agentRelease());

/** The followable resources, their targets' views made against `versions`. */
export const resourceSources = (versions: ShippedVersions): Readonly<Record<ResourceType, ResourceSource>> => {
  const targetView = targetListView(versions);
  const sources: Readonly<Record<ResourceType, ResourceSource>> = {
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
          look(async (fresh) => (fresh.length === 0 ? previous : sources.pending_deployments.list(deps, watcher)));
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
            .map((t) => targetView(t, now)),
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
          return keyed([...known.values()].map((t) => targetView(t, now)));
        };
      },
      // A heartbeat alone (every 15 s per agent) is not a change; the status it keeps or moves is.
      fingerprint: ({ last_heartbeat_at: _heartbeat, ...rest }) => stableJson(rest),
    },
  };
  return sources;
};
