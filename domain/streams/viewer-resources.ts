// The viewer channel's resource-list topics: which list a connection may watch, and the snapshot it is sent first.
// The rules are the SSE resource streams' (resource-sources.ts): the resource's permission, a tenant's caller sees
// its tenant's list, a global caller all of them or one tenant's (`tenant_id`); the snapshot is the same listing, as
// `created` changes, at most 100 per message. What is pushed afterwards is viewer-changes.ts (the table's stream).
import { ValidationError } from '../errors.js';
import { authorize } from '../identity/authenticate.js';
import {
  isResourceType,
  RESOURCE_TYPES,
  type ResourceSource,
  type ResourceListDeps,
  type ResourceType,
  type Watcher,
} from './resource-sources.js';
import { changesMessages } from './viewer-changes.js';
import { callerOfViewer } from './viewer-messages.js';
import type { ViewerConnection, ViewerMessage, ViewerTopic } from './viewer-ports.js';

/** What the resource topics read: the SSE resource streams' listings and rules. */
export interface ViewerResourceDeps {
  readonly lists: ResourceListDeps;
  readonly sources: Readonly<Record<ResourceType, Pick<ResourceSource, 'permission' | 'list'>>>;
}

/**
 * The topic of a `resources` subscription and, when asked, its snapshot: VALIDATION_ERROR for an unknown resource
 * type, INSUFFICIENT_PERMISSIONS without the resource's permission. A tenant's caller watches its tenant's list
 * (`tenant_id` ignored, as the SSE stream does); a global caller the list of all (`null`) or of `tenant_id`.
 */
export const openResourceTopic = async (
  deps: ViewerResourceDeps,
  viewer: ViewerConnection,
  request: { resourceType: string; tenantId: string | undefined; snapshot: boolean },
): Promise<{ topic: ViewerTopic; snapshot: readonly ViewerMessage[] }> => {
  const { resourceType } = request;
  if (!isResourceType(resourceType))
    throw new ValidationError(`resource_type must be one of ${RESOURCE_TYPES.join(', ')}.`, [
      { field: 'resource_type', code: 'VALIDATION_ERROR', message: `must be one of ${RESOURCE_TYPES.join(', ')}` },
    ]);
  const source = deps.sources[resourceType];
  const caller = callerOfViewer(viewer);
  authorize(caller, source.permission);
  const tenantId = viewer.tenantId ?? request.tenantId ?? null;
  const topic: ViewerTopic = { kind: 'resources', resourceType, tenantId };
  if (!request.snapshot) return { topic, snapshot: [] };
  const watcher: Watcher = { caller, tenantId: viewer.tenantId === null ? request.tenantId : undefined };
  const listed = await source.list(deps.lists, watcher);
  return {
    topic,
    snapshot: changesMessages(
      resourceType,
      [...listed].map(([id, record]) => ({ event: 'created' as const, id, record })),
    ),
  };
};
