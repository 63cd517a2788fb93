// What the viewer channel sends, shared by the subscribe's catch-up and the push at the write: a stored event as the
// channel sends it, `events` messages cut at 100 events and 100 KB (API Gateway takes frames of up to 128 KB), and the
// caller a stored connection stands for.
import { streamMessage, type StoredEvent } from '../deployments/events.js';
import type { Caller } from '../identity/types.js';
import type { ViewerConnection, ViewerEvent, ViewerMessage } from './viewer-ports.js';

/** Most events, and most bytes of their JSON, in one `events` message. */
export const EVENTS_PER_MESSAGE = 100;
export const BYTES_PER_MESSAGE = 100 * 1024;

const sizeOf = (value: unknown): number => new TextEncoder().encode(JSON.stringify(value)).length;

/** A stored event as the channel sends it: the SSE log stream's message and its seq. */
export const viewerEvent = (stored: StoredEvent): ViewerEvent => ({ id: stored.seq, ...streamMessage(stored.event) });

/** Events cut into runs of at most `maxEvents` events and `maxBytes` bytes (an event over it goes alone). */
export const chunkEvents = (
  events: readonly ViewerEvent[],
  maxEvents = EVENTS_PER_MESSAGE,
  maxBytes = BYTES_PER_MESSAGE,
): ViewerEvent[][] => {
  const chunks: ViewerEvent[][] = [];
  let current: ViewerEvent[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = sizeOf(event);
    if (current.length > 0 && (current.length >= maxEvents || bytes + size > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
};

/** The `events` messages of a run of one deployment's events, in order. */
export const eventsMessages = (deploymentId: string, events: readonly ViewerEvent[]): ViewerMessage[] =>
  chunkEvents(events).map((chunk) => ({ type: 'events', deployment_id: deploymentId, events: chunk }));

/** The caller a stored connection stands for (as verified at connect). */
export const callerOfViewer = (viewer: ViewerConnection): Caller => ({
  kind: viewer.credential.kind === 'session' ? 'user' : 'api_key',
  userId: viewer.userId,
  tenantId: viewer.tenantId,
  roles: [],
  permissions: new Set(viewer.permissions),
  ...(viewer.credential.apiKeyId === null ? {} : { apiKeyId: viewer.credential.apiKeyId }),
});
