// Targets as users see them: list, get, rename / retag, delete. Status comes from the agent's last heartbeat, as
// decisions.md says: online under 60 s since it, stale under 300 s, offline after (or never seen). A connected idle
// agent pings every AGENT_IDLE_PING_SECONDS (25 s) to stay online; one that said goodbye (stopped cleanly) is offline
// at once.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { TargetsDeps } from './deps.js';
import { statusOf } from './status.js';
import { matchesTags, uniqueTags } from './tags.js';
import type { Tag, Target, TargetStatus } from './types.js';
import { targetViewWithAgent } from './views.js';

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
