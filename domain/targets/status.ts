// A target's status rules, pure: online, stale or offline from its agent's last heartbeat and goodbye (decisions.md:
// online under 60 s since it, stale under 300 s, offline after or never seen; a goodbye is offline at once), and the
// dead-agent rule the engine applies to a command. A leaf: the targets use cases, the plan, the engine and the
// webhooks read it without reaching the targets use cases.
import type { Target, TargetStatus } from './types.js';

export const ONLINE_WITHIN_MS = 60_000;
export const STALE_WITHIN_MS = 300_000;

/** A busy agent (or one just given work) must show life within this, else its steps fail: the dead-agent rule. */
export const ANSWER_WITHIN_MS = 60_000;

/** Whether the agent's last word was its goodbye: it stopped cleanly and has not been heard from since. */
export const signedOff = (target: Pick<Target, 'lastHeartbeatAt' | 'signedOffAt'>): boolean =>
  typeof target.signedOffAt === 'string' &&
  (target.lastHeartbeatAt === null || target.signedOffAt >= target.lastHeartbeatAt);

/** The status of a target: its last heartbeat, and its goodbye. */
export const statusOf = (target: Pick<Target, 'lastHeartbeatAt' | 'signedOffAt'>, now: Date): TargetStatus => {
  if (target.lastHeartbeatAt === null || signedOff(target)) return 'offline';
  const age = now.getTime() - Date.parse(target.lastHeartbeatAt);
  if (age < ONLINE_WITHIN_MS) return 'online';
  return age < STALE_WITHIN_MS ? 'stale' : 'offline';
};

/**
 * Why a target's agent counts as gone for a command it was given, or undefined while it answers. A busy agent
 * heartbeats every 15 s: silent for 60 s, it is gone. An agent on a WebSocket is given 60 s from the command's
 * creation to claim it (the push wakes it at once); one without a connection must have been heard from within 60 s.
 * So an agent whose process died (its socket closed) fails its steps at the engine's next look, and a host that
 * vanished without closing its socket within 60 s of the command.
 */
export const agentGone = (
  target: Pick<Target, 'lastHeartbeatAt' | 'connectionId' | 'disconnectedAt' | 'signedOffAt' | 'name'>,
  commandCreatedAt: string,
  now: Date,
): string | undefined => {
  if (signedOff(target))
    return `its agent was stopped at ${target.signedOffAt} (it said goodbye) and has not started again`;
  const heard = target.lastHeartbeatAt === null ? 0 : Date.parse(target.lastHeartbeatAt);
  const connected = typeof target.connectionId === 'string';
  const since = connected ? Math.max(heard, Date.parse(commandCreatedAt)) : heard;
  if (now.getTime() - since < ANSWER_WITHIN_MS) return undefined;
  const last = target.lastHeartbeatAt === null ? 'never heard from' : `last heard from at ${target.lastHeartbeatAt}`;
  if (connected) return `its agent holds a connection but has not answered for ${ANSWER_WITHIN_MS / 1000} s (${last})`;
  if (
    typeof target.disconnectedAt === 'string' &&
    target.lastHeartbeatAt !== null &&
    target.disconnectedAt >= target.lastHeartbeatAt
  )
    return `its agent disconnected at ${target.disconnectedAt} and has not been heard from since (${last})`;
  return `its agent has not been heard from for ${ANSWER_WITHIN_MS / 1000} s (${last})`;
};
