// Targets as users see them: list, get, rename / retag, delete. Status comes from the last heartbeat:
// online under 60 s, stale under 300 s, offline otherwise (or never seen).
import { ConflictError, NotFoundError } from '../errors.js';
import type { Caller } from '../identity/types.js';
import { pageOf, type PageRequest } from '../shared/pagination.js';
import type { TargetsDeps } from './deps.js';
import type { Tag, Target, TargetStatus } from './types.js';

export const ONLINE_WITHIN_MS = 60_000;
export const STALE_WITHIN_MS = 300_000;

export const targetStatus = (lastHeartbeatAt: string | null, now: Date): TargetStatus => {
  if (lastHeartbeatAt === null) return 'offline';
  const age = now.getTime() - Date.parse(lastHeartbeatAt);
  if (age < ONLINE_WITHIN_MS) return 'online';
  return age < STALE_WITHIN_MS ? 'stale' : 'offline';
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
  status: targetStatus(target.lastHeartbeatAt, now),
  last_heartbeat_at: target.lastHeartbeatAt,
  tenant_id: target.tenantId,
  environment_id: target.environmentId,
  created_at: target.createdAt,
});

export type TargetView = ReturnType<typeof targetView>;

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
  deps: Pick<TargetsDeps, 'targets' | 'clock'>,
  caller: Caller,
  query: ListTargetsQuery,
) => {
  const now = deps.clock.now();
  const needle = query.search?.toLowerCase();
  const targets = (await deps.targets.listAll())
    .filter((t) => visibleTo(caller, t))
    .filter((t) => caller.tenantId !== null || query.tenant_id === undefined || t.tenantId === query.tenant_id)
    .filter((t) => query.environment_id === undefined || t.environmentId === query.environment_id)
    .filter((t) => query.status === undefined || targetStatus(t.lastHeartbeatAt, now) === query.status)
    .filter((t) => query.tags === undefined || query.tags.length === 0 || matchesTags(t.tags, query.tags, true))
    .filter(
      (t) => needle === undefined || t.name.toLowerCase().includes(needle) || t.hostname.toLowerCase().includes(needle),
    )
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const page = pageOf(targets, query);
  return { data: page.data.map((t) => targetView(t, now)), meta: page.meta };
};

export const getTarget = async (deps: Pick<TargetsDeps, 'targets' | 'clock'>, caller: Caller, id: string) =>
  targetView(await findVisibleTarget(deps, caller, id), deps.clock.now());

export interface UpdateTargetCommand {
  readonly name?: string | undefined;
  readonly tags?: readonly Tag[] | undefined;
}

export const updateTarget = async (
  deps: Pick<TargetsDeps, 'targets' | 'clock'>,
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
  return targetView(next, now);
};

/** Deleting a target revokes its agent token at once: the agent's next call answers 401. */
export const deleteTarget = async (deps: Pick<TargetsDeps, 'targets'>, caller: Caller, id: string): Promise<void> => {
  await deps.targets.delete(await findVisibleTarget(deps, caller, id));
};

/** One value per key: the last one given wins. */
export const uniqueTags = (tags: readonly Tag[]): readonly Tag[] => [
  ...new Map(tags.map((t) => [t.key, t] as const)).values(),
];
