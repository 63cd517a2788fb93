// Subscribing a viewer connection to a topic. A deployment: the permission and the deployment's visibility checked
// with the stored caller (as the SSE log stream checks them), the subscription stored, then the catch-up: the stored
// events after `last_event_id` in `events` messages (at most 100 events and 100 KB each), and once the writers'
// subscriber cache (1 s) has surely seen the subscription, one more read from where the catch-up ended (a writer
// whose cache did not know the subscriber yet pushed nothing). A finished deployment without a stored terminal
// state_change gets it appended, keyed, as the SSE stream does (ensureStoredEnd: stored exactly once, whoever
// observes it), once END_GRACE_MS have passed since it finished (before that, its writer still stores and pushes it). A resource list: helper B's
// openResourceTopic decides the topic and the snapshot.
import { ValidationError } from '../errors.js';
import { visibleDeployment } from '../deployments/cancel.js';
import { ensureStoredEnd, isTerminalEvent } from '../deployments/events.js';
import { TERMINAL_STATES, type Deployment } from '../deployments/types.js';
import { authorize } from '../identity/authenticate.js';
import { liveViewer, VIEWER_TOPIC_LIMIT, type TopicRequest, type ViewerSubscribeDeps } from './viewer-channel.js';
import type { ViewerConnection, ViewerEvent, ViewerMessage, ViewerTopic } from './viewer-ports.js';
import { openResourceTopic } from './viewer-resources.js';
import { callerOfViewer, chunkEvents, viewerEvent } from './viewer-messages.js';

/** How long a writer caches a deployment's subscriber list (the push at the write). */
export const SUBSCRIBER_CACHE_MS = 1_000;
/** Margin past the cache period before the second read. */
const SECOND_READ_MARGIN_MS = 100;
/** Events read per store call during a catch-up. */
const PAGE = 500;
/** How long after a finish without a stored end the catch-up waits for its writer before appending it itself. */
export const END_GRACE_MS = 2_000;

type Echo = { readonly ref?: string; readonly topic: Readonly<Record<string, unknown>> };

/** Sends `events` in chunks; false when the connection is gone. */
const sendEvents = async (
  deps: ViewerSubscribeDeps,
  connectionId: string,
  deploymentId: string,
  events: readonly ViewerEvent[],
): Promise<boolean> => {
  for (const chunk of chunkEvents(events)) {
    const sent = await deps.push.send(connectionId, { type: 'events', deployment_id: deploymentId, events: chunk });
    if (sent === 'gone') return false;
  }
  return true;
};

/** Sends every stored event after `from`; the last seq sent (or `from`), undefined when the connection is gone. */
const catchUp = async (
  deps: ViewerSubscribeDeps,
  connectionId: string,
  deploymentId: string,
  from: number,
): Promise<{ readonly cursor: number; readonly sawEnd: boolean } | undefined> => {
  let cursor = from;
  let sawEnd = false;
  for (;;) {
    const page = await deps.events.after(deploymentId, cursor, PAGE);
    if (page.length === 0) return { cursor, sawEnd };
    if (!(await sendEvents(deps, connectionId, deploymentId, page.map(viewerEvent)))) return undefined;
    cursor = page[page.length - 1]?.seq ?? cursor;
    sawEnd ||= page.some((stored) => isTerminalEvent(stored.event));
    if (page.length < PAGE) return { cursor, sawEnd };
  }
};

/** Whether a finished deployment's end is stored past `cursor` (appended now when no observer stored it yet). */
const endAfter = async (deps: ViewerSubscribeDeps, deployment: Deployment, cursor: number): Promise<boolean> => {
  if (!TERMINAL_STATES.has(deployment.state)) return false;
  const finishedAt = Date.parse(deployment.completedAt ?? '') || 0;
  if (deps.clock.now().getTime() - finishedAt < END_GRACE_MS) return false;
  const end = await ensureStoredEnd(deps.events, deployment);
  return end !== undefined && end.seq > cursor;
};

const subscribeToDeployment = async (
  deps: ViewerSubscribeDeps,
  viewer: ViewerConnection,
  request: Extract<TopicRequest, { topic: 'deployment' }>,
  echo: Echo,
): Promise<void> => {
  const caller = callerOfViewer(viewer);
  authorize(caller, 'deployments:read');
  const deployment = await visibleDeployment(deps, caller, request.deploymentId);
  const topic: ViewerTopic = { kind: 'deployment', deploymentId: deployment.id };
  const storedAt = deps.clock.now().getTime();
  if (!(await store(deps, viewer, topic, echo))) return;
  const { connectionId } = viewer;
  const first = await catchUp(deps, connectionId, deployment.id, request.lastEventId);
  if (first === undefined) return;
  await deps.wait(Math.max(0, storedAt + SUBSCRIBER_CACHE_MS + SECOND_READ_MARGIN_MS - deps.clock.now().getTime()));
  const second = await catchUp(deps, connectionId, deployment.id, first.cursor);
  if (second === undefined || first.sawEnd || second.sawEnd) return;
  const latest = TERMINAL_STATES.has(deployment.state)
    ? deployment
    : ((await deps.deployments.get(deployment.id)) ?? deployment);
  if (await endAfter(deps, latest, second.cursor)) await catchUp(deps, connectionId, deployment.id, second.cursor);
};

/** Stores the subscription and answers `subscribed`; false when the connection is gone. */
const store = async (
  deps: ViewerSubscribeDeps,
  viewer: ViewerConnection,
  topic: ViewerTopic,
  echo: Echo,
): Promise<boolean> => {
  const outcome = await deps.registry.subscribe(viewer, topic, VIEWER_TOPIC_LIMIT);
  if (outcome === 'gone') return false;
  if (outcome === 'limit')
    throw ValidationError.field(
      'topic',
      `A connection watches at most ${VIEWER_TOPIC_LIMIT} topics at once: unsubscribe one first.`,
    );
  return (await deps.push.send(viewer.connectionId, { type: 'subscribed', ...echo })) === 'sent';
};

/**
 * `subscribe`: checks, stores and answers `subscribed`, then what the topic has to catch up on. Refusals are thrown
 * (the handler sends them as `error` messages): INSUFFICIENT_PERMISSIONS, NOT_FOUND (also another tenant's
 * deployment), VALIDATION_ERROR (past VIEWER_TOPIC_LIMIT topics), INVALID_TOKEN (an unknown connection).
 */
export const subscribeViewer = async (
  deps: ViewerSubscribeDeps,
  connectionId: string,
  request: TopicRequest,
  echo: Echo,
): Promise<void> => {
  const viewer = await liveViewer(deps, connectionId);
  if (viewer === undefined) return;
  if (request.topic === 'deployment') {
    await subscribeToDeployment(deps, viewer, request, echo);
    return;
  }
  const { topic, snapshot } = await openResourceTopic(deps.resources, viewer, {
    resourceType: request.resourceType,
    tenantId: request.tenantId,
    snapshot: request.snapshot,
  });
  if (!(await store(deps, viewer, topic, echo))) return;
  for (const message of snapshot as readonly ViewerMessage[]) {
    if ((await deps.push.send(connectionId, message)) === 'gone') return;
  }
};
