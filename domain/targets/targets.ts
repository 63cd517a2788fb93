// Targets as users see them: list, get, rename / retag, delete. Status comes from the agent's last heartbeat, as
// decisions.md says: online under 60 s since it, stale under 300 s, offline after (or never seen). A connected idle
// agent pings every AGENT_IDLE_PING_SECONDS (25 s) to stay online; one that said goodbye (stopped cleanly) is offline
// at once.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import { agentOutdated, type AgentRelease } from './agent-release.js';
import { agentCompatible } from './compatibility.js';
import type { TargetsDeps } from './deps.js';
import type { Tag, Target, TargetStatus } from './types.js';

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

export const targetView = (target: Target, now: Date) => ({
  id: target.id,
  short_id: target.shortId,
  name: target.name,
  hostname: target.hostname,
  os: target.os,
  arch: target.arch,
  agent_version: target.agentVersion,
  tags: target.tags.map((t) => ({ key: t.key, value: t.value })),
  status: statusOf(target, now),
  last_heartbeat_at: target.lastHeartbeatAt,
  tenant_id: target.tenantId,
  environment_id: target.environmentId,
  created_at: target.createdAt,
});

export type TargetView = ReturnType<typeof targetView>;

/**
 * The target as the targets endpoints and streams show it: the spec's fields, `agent_compatible`, whether its agent
 * (the version it last named) is of this server's major version (false means its calls are refused), and
 * `agent_outdated`, whether that version is older than the agent build the service ships (false when none is known).
 */
export const targetViewWithAgent = (
  target: Target,
  now: Date,
  serverVersion: string,
  shipped?: AgentRelease | null,
) => ({
  ...targetView(target, now),
  agent_compatible: agentCompatible(target.agentVersion, serverVersion),
  agent_outdated: agentOutdated(target.agentVersion, shipped),
});

export const visibleTo = (caller: Caller, target: Target): boolean =>
  caller.tenantId === null || target.tenantId === caller.tenantId;

/** The target, if the caller may see it; 404 otherwise (also for another tenant's). */
export const findVisibleTarget = async (
  deps: Pick<TargetsDeps, 'targets'>,
  caller: Caller,
  id: string,
): Promise<Target> => {
  const target = await deps.targets.find(id);
  if (target === undefined || !visibleTo(caller, target)) throw new NotFoundError('Target', id);
  return target;
};

/** Every `key=value` of `wanted` among the target's tags (all = AND) or at least one (any = OR). */
export const matchesTags = (tags: readonly Tag[], wanted: readonly Tag[], all: boolean): boolean => {
  const has = (w: Tag) => tags.some((t) => t.key === w.key && t.value === w.value);
  return all ? wanted.every(has) : wanted.some(has);
};

export interface ListTargetsQuery extends PageRequest {
  readonly status?: TargetStatus | undefined;
  readonly tenant_id?: string | undefined;
  readonly environment_id?: string | undefined;
  /** `key=value` pairs; a target must carry all of them. */
  readonly tags?: readonly Tag[] | undefined;
  readonly search?: string | undefined;
}

/** Oldest first (enrollment order), so pages are stable while agents heartbeat. */
export const listTargets = async (
  deps: Pick<TargetsDeps, 'targets' | 'clock' | 'settings'>,
  caller: Caller,
  query: ListTargetsQuery,
) => {
  const now = deps.clock.now();
  const needle = query.search?.toLowerCase();
  const targets = (await deps.targets.listAll())
    .filter((t) => visibleTo(caller, t))
    .filter((t) => caller.tenantId !== null || query.tenant_id === undefined || t.tenantId === query.tenant_id)
    .filter((t) => query.environment_id === undefined || t.environmentId === query.environment_id)
    .filter((t) => query.status === undefined || statusOf(t, now) === query.status)
    .filter((t) => query.tags === undefined || query.tags.length === 0 || matchesTags(t.tags, query.tags, true))
    .filter(
      (t) => needle === undefined || t.name.toLowerCase().includes(needle) || t.hostname.toLowerCase().includes(needle),
    )
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const page = pageOf(targets, query);
  return {
    data: page.data.map((t) => targetViewWithAgent(t, now, deps.settings.serverVersion, deps.settings.agentRelease)),
    meta: page.meta,
  };
};

export const getTarget = async (
  deps: Pick<TargetsDeps, 'targets' | 'clock' | 'settings'>,
  caller: Caller,
  id: string,
) =>
  targetViewWithAgent(
    await findVisibleTarget(deps, caller, id),
    deps.clock.now(),
    deps.settings.serverVersion,
    deps.settings.agentRelease,
  );

export interface UpdateTargetCommand {
  readonly name?: string | undefined;
  readonly tags?: readonly Tag[] | undefined;
}

export const updateTarget = async (
  deps: Pick<TargetsDeps, 'targets' | 'clock' | 'settings'>,
  caller: Caller,
  id: string,
  command: UpdateTargetCommand,
) => {
  const target = await findVisibleTarget(deps, caller, id);
  const now = deps.clock.now();
  const next: Target = {
    ...target,
    name: command.name ?? target.name,
    tags: command.tags === undefined ? target.tags : uniqueTags(command.tags),
    updatedAt: now.toISOString(),
  };
  if (!(await deps.targets.update(target, next)))
    throw new ConflictError('The target changed meanwhile; read it again and retry.');
  return targetViewWithAgent(next, now, deps.settings.serverVersion, deps.settings.agentRelease);
};

/** Deletes the target; its agent token stops working at once, and an open WebSocket is told and closed. */
export const deleteTarget = async (
  deps: Pick<TargetsDeps, 'targets' | 'dispatch'>,
  caller: Caller,
  id: string,
): Promise<void> => {
  const target = await findVisibleTarget(deps, caller, id);
  await deps.targets.delete(target);
  await deps.dispatch.revoke(target);
};

/** One value per key: the last one given wins. */
export const uniqueTags = (tags: readonly Tag[]): readonly Tag[] => [
  ...new Map(tags.map((t) => [t.key, t] as const)).values(),
];
