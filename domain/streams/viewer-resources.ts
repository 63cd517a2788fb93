// The viewer channel's resource-list topics (helper B's file: this stub only refuses until the real one replaces
// it): which list a connection may watch, and the snapshot it is sent first.
import { ValidationError } from '../errors.js';
import type { ViewerConnection, ViewerMessage, ViewerTopic } from './viewer-ports.js';

/** What the resource topics read (the stub needs nothing). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ViewerResourceDeps {}

export const openResourceTopic = async (
  _deps: ViewerResourceDeps,
  _viewer: ViewerConnection,
  _request: { resourceType: string; tenantId: string | undefined; snapshot: boolean },
): Promise<{ topic: ViewerTopic; snapshot: readonly ViewerMessage[] }> => {
  await Promise.resolve();
  throw new ValidationError('resource topics are not available yet');
};
