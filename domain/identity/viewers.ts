// After a use case revokes a credential or ends a session, the viewer connections it opened are closed (the
// ViewerCloser port, domain/streams/viewer-ports.ts): at once, instead of at their next message's re-check. The
// write is already committed: a failure here is the closer's to log and never fails the request.
import type { ViewerCloser, ViewerSelector } from '../streams/viewer-ports.js';

export interface ViewerClosingDeps {
  /** Absent where the service has no viewer channel (no WebSocket API) and in tests that do not need it. */
  readonly viewers?: ViewerCloser | undefined;
}

export const closeRevokedViewers = async (deps: ViewerClosingDeps, selector: ViewerSelector): Promise<void> => {
  try {
    await deps.viewers?.close(selector, 'revoked');
  } catch {
    // The closer logs its own failures; a connection left open is closed by its next re-check or its expiry.
  }
};
