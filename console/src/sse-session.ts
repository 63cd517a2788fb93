// The single-use tokens of the live views (`POST /auth/sse-token`): each connection of a stream or of the viewer
// channel takes a fresh one, renewing the SSE session (`/auth/sse-token/refresh`) when it can and starting a new
// one when it cannot. The answer also names the viewer channel (`socket_url`, null without a WebSocket API).
import { api } from './api.js';

export interface SseGrant {
  readonly sse_token: string;
  readonly session_id: string;
  readonly refresh_token: string;
  /** The viewer channel's WebSocket URL; null (or absent, from an older service) without one. */
  readonly socket_url?: string | null;
}

/** A token source of one stream or channel: each call answers a fresh grant. */
export const sseSession = (): (() => Promise<SseGrant>) => {
  let session: SseGrant | undefined;
  return async () => {
    if (session !== undefined) {
      try {
        session = await api<SseGrant>('POST', '/auth/sse-token/refresh', {
          session_id: session.session_id,
          refresh_token: session.refresh_token,
        });
        return session;
      } catch {
        session = undefined;
      }
    }
    session = await api<SseGrant>('POST', '/auth/sse-token', {});
    return session;
  };
};
