// Resource lists pushed to viewers (issue 36): a batch of changed records (old and new, from the table's stream) ->
// their list views (the views the SSE resource streams send) -> `changes` messages to the connections subscribed to
// (resource, the record's tenant) and to (resource, all), one message per connection per resource in the batch (split
// at 100 changes and ~100 KB). A record whose view did not change (a target's heartbeat, a write of fields no view
// shows) is skipped. Pending requests carry their queue position, so a change of the pending queue reads it once
// (one listing per batch) and also re-sends the other pending requests, whose positions may have moved.
import type { PendingRequestRepository } from '../deployments/ports.js';
import { queuePositions } from '../deployments/queries.js';
import type { Deployment, PendingRequest } from '../deployments/types.js';
import { deploymentView, pendingRequestView } from '../deployments/views.js';
import type { Clock } from '../shared/ports.js';
import type { Target } from '../targets/types.js';
import { failureText, type Warn } from './ports.js';
import { changeMessage } from './resource-changes.js';
import type { ResourceChange } from './resource-diff.js';
import { stableJson } from './resource-diff.js';
import type { ResourceSource, ResourceType, ResourceView } from './resource-sources.js';
import type { ViewerConnection, ViewerMessage, ViewerPush, ViewerRegistry, ViewerTopic } from './viewer-ports.js';
import { topicKey } from './viewer-ports.js';

/** A `changes` message holds at most this many changes and about this many bytes. */
export const MAX_CHANGES_PER_MESSAGE = 100;
export const MAX_CHANGES_MESSAGE_BYTES = 100_000;

/** One written record of a followed resource: its image before the write and after (absent: created, deleted). */
export type WrittenRecord =
  | { readonly resourceType: 'deployments'; readonly old?: Deployment; readonly new?: Deployment }
  | { readonly resourceType: 'pending_deployments'; readonly old?: PendingRequest; readonly new?: PendingRequest }
  | { readonly resourceType: 'targets'; readonly old?: Target; readonly new?: Target };

export interface ViewerChangesDeps {
  readonly registry: Pick<ViewerRegistry, 'subscribers' | 'disconnect'>;
  readonly push: Pick<ViewerPush, 'send'>;
  readonly pending: Pick<PendingRequestRepository, 'listAll'>;
  readonly clock: Clock;
  readonly warn: Warn;
  /** Each resource's permission and what counts as a change (RESOURCE_SOURCES). */
  readonly sources: Readonly<Record<ResourceType, Pick<ResourceSource, 'permission' | 'fingerprint'>>>;
  /** A target's list view at a time (its agent compared with the shipped versions). */
  readonly targetView: (target: Target, now: Date) => ResourceView;
}

/** A change ready to send, with the tenant of its record (null: a global record). */
interface RoutedChange {
  readonly resourceType: ResourceType;
  readonly tenantId: string | null;
  readonly change: ResourceChange<ResourceView>;
}

const eventOf = (old: unknown, fresh: unknown): ResourceChange<unknown>['event'] =>
  old === undefined ? 'created' : fresh === undefined ? 'deleted' : 'updated';

/** The change of one record as its views say, or none when the view did not change. */
const viewChange = (
  resourceType: ResourceType,
  record: { readonly id: string; readonly tenantId: string | null },
  views: { readonly old: ResourceView | undefined; readonly new: ResourceView | undefined },
  fingerprint: (view: ResourceView) => string,
): RoutedChange | undefined => {
  const event = eventOf(views.old, views.new);
  if (event === 'updated' && fingerprint(views.old!) === fingerprint(views.new!)) return undefined;
  const view = views.new ?? views.old!;
  return { resourceType, tenantId: record.tenantId, change: { event, id: record.id, record: view } };
};

/** The changes of the pending queue: the changed requests, and the other pending ones when the queue moved. */
const pendingChanges = async (
  deps: ViewerChangesDeps,
  changed: readonly Extract<WrittenRecord, { resourceType: 'pending_deployments' }>[],
): Promise<RoutedChange[]> => {
  if (changed.length === 0) return [];
  const all = await deps.pending.listAll();
  const positions = queuePositions(all);
  const fingerprint = deps.sources.pending_deployments.fingerprint ?? stableJson;
  const routed: RoutedChange[] = [];
  let queueMoved = false;
  for (const record of changed) {
    const current = record.new ?? record.old!;
    const position = positions.get(current.id);
    queueMoved ||=
      (record.old?.status === 'pending') !== (record.new?.status === 'pending') ||
      record.old?.priority !== record.new?.priority;
    const views = {
      old: record.old === undefined ? undefined : pendingRequestView(record.old, position),
      new: record.new === undefined ? undefined : pendingRequestView(record.new, position),
    };
    const change = viewChange('pending_deployments', current, views, fingerprint);
    if (change !== undefined) routed.push(change);
  }
  if (!queueMoved) return routed;
  const changedIds = new Set(changed.map((r) => (r.new ?? r.old!).id));
  for (const request of all)
    if (request.status === 'pending' && !changedIds.has(request.id))
      routed.push({
        resourceType: 'pending_deployments',
        tenantId: request.tenantId,
        change: { event: 'updated', id: request.id, record: pendingRequestView(request, positions.get(request.id)) },
      });
  return routed;
};

/** The changes a batch of written records makes to the lists, in the batch's order (pending requests last). */
export const listChanges = async (
  deps: ViewerChangesDeps,
  batch: readonly WrittenRecord[],
): Promise<RoutedChange[]> => {
  const now = deps.clock.now();
  const routed: RoutedChange[] = [];
  for (const record of batch) {
    if (record.resourceType === 'deployments') {
      const current = record.new ?? record.old;
      if (current === undefined) continue;
      const views = { old: record.old && deploymentView(record.old), new: record.new && deploymentView(record.new) };
      const change = viewChange('deployments', current, views, deps.sources.deployments.fingerprint ?? stableJson);
      if (change !== undefined) routed.push(change);
    } else if (record.resourceType === 'targets') {
      const current = record.new ?? record.old;
      if (current === undefined) continue;
      const view = (target: Target | undefined) => target && deps.targetView(target, now);
      const views = { old: view(record.old), new: view(record.new) };
      const change = viewChange('targets', current, views, deps.sources.targets.fingerprint ?? stableJson);
      if (change !== undefined) routed.push(change);
    }
  }
  const pending = batch.filter(
    (r): r is Extract<WrittenRecord, { resourceType: 'pending_deployments' }> =>
      r.resourceType === 'pending_deployments' && (r.new ?? r.old) !== undefined,
  );
  return [...routed, ...(await pendingChanges(deps, pending))];
};

/** The `changes` messages of one resource's changes, in order, each at most 100 changes and ~100 KB. */
export const changesMessages = (
  resourceType: ResourceType,
  changes: readonly ResourceChange<ResourceView>[],
): ViewerMessage[] => {
  const messages: ViewerMessage[] = [];
  let batch: ReturnType<typeof changeMessage>[] = [];
  let bytes = 0;
  for (const change of changes) {
    const message = changeMessage(resourceType, change);
    const size = JSON.stringify(message).length + 1;
    if (batch.length > 0 && (batch.length === MAX_CHANGES_PER_MESSAGE || bytes + size > MAX_CHANGES_MESSAGE_BYTES)) {
      messages.push({ type: 'changes', resource_type: resourceType, changes: batch });
      batch = [];
      bytes = 0;
    }
    batch.push(message);
    bytes += size;
  }
  if (batch.length > 0) messages.push({ type: 'changes', resource_type: resourceType, changes: batch });
  return messages;
};

/** The topics a change reaches: its tenant's list (a tenant's callers, a global caller narrowed to it) and all. */
const topicsOf = (change: RoutedChange): ViewerTopic[] => [
  ...(change.tenantId === null
    ? []
    : [{ kind: 'resources' as const, resourceType: change.resourceType, tenantId: change.tenantId }]),
  { kind: 'resources', resourceType: change.resourceType, tenantId: null },
];

/**
 * Pushes a batch of written records to the viewers of the lists they change. The subscriber queries are the only
 * failure that throws (the batch is then retried); a send that fails is logged, a gone connection forgotten.
 */
export const pushResourceChanges = async (deps: ViewerChangesDeps, batch: readonly WrittenRecord[]): Promise<void> => {
  const routed = await listChanges(deps, batch);
  if (routed.length === 0) return;
  // Per topic, its changes in order; then per connection and resource, the changes of every topic it watches.
  const byTopic = new Map<string, { topic: ViewerTopic; changes: RoutedChange[] }>();
  for (const change of routed)
    for (const topic of topicsOf(change)) {
      const key = topicKey(topic);
      const entry = byTopic.get(key) ?? { topic, changes: [] };
      entry.changes.push(change);
      byTopic.set(key, entry);
    }
  const perConnection = new Map<string, { connection: ViewerConnection; changes: Map<ResourceType, RoutedChange[]> }>();
  const topics = [...byTopic.values()];
  const subscribers = await Promise.all(topics.map(({ topic }) => deps.registry.subscribers(topic)));
  topics.forEach(({ changes }, index) => {
    for (const connection of subscribers[index]!) {
      const entry = perConnection.get(connection.connectionId) ?? { connection, changes: new Map() };
      for (const change of changes) {
        // Checked at subscribe; kept here too, so a change of the rules cannot leak a list.
        if (!connection.permissions.includes(deps.sources[change.resourceType].permission)) continue;
        entry.changes.set(change.resourceType, [...(entry.changes.get(change.resourceType) ?? []), change]);
      }
      perConnection.set(connection.connectionId, entry);
    }
  });
  await Promise.all(
    [...perConnection.values()].map(async ({ connection, changes }) => {
      try {
        for (const [resourceType, list] of changes)
          for (const message of changesMessages(
            resourceType,
            list.map((c) => c.change),
          ))
            if ((await deps.push.send(connection.connectionId, message)) === 'gone') {
              await deps.registry.disconnect(connection.connectionId);
              return;
            }
      } catch (error) {
        deps.warn('viewer changes: a send failed', {
          connection_id: connection.connectionId,
          error: failureText(error),
        });
      }
    }),
  );
};
