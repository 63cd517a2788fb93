// The composition root, viewer push part (issue 36): the viewer registry and the @connections adapter, the
// publisher every event writer pushes through (one per process: its subscriber cache lives here), and the resource
// changes consumer's dependencies. Without a WebSocket API (AGENT_SOCKET_ENDPOINT unset) there is nothing to push
// to: no publisher, and the event store is left as it is.
import { setTimeout as pause } from 'node:timers/promises';
import type { DeploymentEventStore, KeyedEventAppender, KeyedEventLookup } from '../../domain/deployments/events.js';
import type { Sleep } from '../../domain/streams/ports.js';
import { resourceSources, targetListView } from '../../domain/streams/resource-sources.js';
import type { ViewerChangesDeps } from '../../domain/streams/viewer-changes.js';
import type { ViewerPush, ViewerRegistry } from '../../domain/streams/viewer-ports.js';
import { publishingEvents, viewerPublisher, type EventPublisher } from '../../domain/streams/viewer-publish.js';
import { agentRelease } from '../../infra/config.js';
import { DynamoPendingRequestRepository } from '../../infra/dynamodb/pending-request-repository.js';
import { once } from './once.js';
import { SERVER_VERSION } from './version.js';
import { viewerPush, viewerRegistry, viewerWarn } from './viewer-connections-wiring.js';
import { infra } from './wiring.js';

/** The registry and the push (viewer-connections-wiring.ts), or undefined when the service has no WebSocket API. */
export const viewerChannel = once((): { registry: ViewerRegistry; push: ViewerPush } | undefined => {
  const push = viewerPush();
  return push === undefined ? undefined : { registry: viewerRegistry(), push };
});

const wait: Sleep = (milliseconds, signal) => pause(milliseconds, undefined, { signal });
const warn = viewerWarn;

/** This process's publisher of deployment events (its subscriber cache is per process). */
const eventPublisher = once((): EventPublisher | undefined => {
  const channel = viewerChannel();
  return channel === undefined ? undefined : viewerPublisher({ ...channel, clock: infra().clock, warn, wait });
});

/** The event store, its appends pushed to the deployment's viewers (as it is when there is no WebSocket API). */
export const withViewerPush = (
  store: DeploymentEventStore & KeyedEventAppender & KeyedEventLookup,
): DeploymentEventStore & KeyedEventAppender & KeyedEventLookup => {
  const publisher = eventPublisher();
  return publisher === undefined ? store : publishingEvents(store, publisher);
};

/** What the resource changes consumer needs, or undefined when there is no WebSocket API. */
export const resourceChangesDeps = once((): ViewerChangesDeps | undefined => {
  const channel = viewerChannel();
  if (channel === undefined) return undefined;
  const versions = { server: SERVER_VERSION, agentRelease };
  return {
    ...channel,
    pending: new DynamoPendingRequestRepository(infra().db, infra().config.TABLE_NAME),
    clock: infra().clock,
    warn,
    sources: resourceSources(versions),
    targetView: targetListView(versions),
  };
});
