// Closing viewer connections that may no longer watch: when a use case revokes a credential or ends a session
// (the ViewerCloser port identity's use cases call after their write), and when a connection passes its expiry
// (the sweep). Each gets `closing` with the reason, then the socket is closed and the connection forgotten.
import { failureText } from './ports.js';
import { closeViewer, grantOfViewer, type ViewerAuth, type ViewerChannelDeps } from './viewer-channel.js';
import type { ViewerCloser, ViewerConnection, ViewerSelector } from './viewer-ports.js';

const selects = (selector: ViewerSelector, viewer: ViewerConnection): boolean => {
  if ('apiKeyId' in selector) return viewer.credential.apiKeyId === selector.apiKeyId;
  if ('sseSessionId' in selector) return viewer.credential.sseSessionId === selector.sseSessionId;
  return true;
};

type CloserDeps = Pick<ViewerChannelDeps, 'registry' | 'push' | 'warn'> & {
  readonly auth: Pick<ViewerAuth, 'stillValid'>;
};

/**
 * Closes the selected connections of the user whose credential is no longer valid (re-checked with the grant the
 * SSE streams re-check): a logout ends the user's login sessions, not the connections an API key of theirs opened.
 * Answers how many were closed; a connection that cannot be closed is logged and left to its own re-check.
 */
export const closeViewers = async (deps: CloserDeps, selector: ViewerSelector, reason: 'revoked'): Promise<number> => {
  const chosen = (await deps.registry.connectionsOf(selector.userId)).filter((viewer) => selects(selector, viewer));
  const closed = await Promise.all(
    chosen.map(async (viewer) => {
      try {
        if (await deps.auth.stillValid(grantOfViewer(viewer))) return false;
        await closeViewer(deps, viewer.connectionId, reason);
        return true;
      } catch (error) {
        deps.warn('viewer channel: closing a revoked connection failed', {
          connection_id: viewer.connectionId,
          error: failureText(error),
        });
        return false;
      }
    }),
  );
  return closed.filter(Boolean).length;
};

/** The ViewerCloser port over closeViewers. */
export const viewerCloser = (deps: CloserDeps): ViewerCloser => ({
  close: async (selector, reason) => {
    await closeViewers(deps, selector, reason);
  },
});

/** The sweep's part: closes up to `limit` connections past their expiry; answers how many. */
export const expireViewers = async (
  deps: Pick<ViewerChannelDeps, 'registry' | 'push' | 'clock' | 'warn'>,
  limit: number,
): Promise<number> => {
  const expired = await deps.registry.expired(deps.clock.now(), limit);
  let closed = 0;
  for (const connectionId of expired) {
    try {
      await closeViewer(deps, connectionId, 'expired');
      closed += 1;
    } catch (error) {
      deps.warn('viewer channel: closing an expired connection failed', {
        connection_id: connectionId,
        error: failureText(error),
      });
    }
  }
  return closed;
};
