// Step 3 of a plan, the targets: target_ids (each visible, of the deployment's tenant and environment) and targets
// matching target_tags (AND or OR), de-duplicated, by name then id; none at all is a 400. And what a preview says
// of them: how many are online, stale or offline, with a warning for each that is not online.
import type { FieldProblem } from '../../errors.js';
import type { Caller } from '../../identity/types.js';
import { statusOf } from '../../targets/status.js';
import { matchesTags } from '../../targets/tags.js';
import type { Target } from '../../targets/types.js';
import type { CreateDeploymentCommand, PlanDeps, TargetSummary } from './command.js';
import { CONFIG_DEFAULTS } from './config.js';
import { problem } from './problems.js';
import type { Scope } from './scope.js';

/** Targets are not shared between tenants: a tenant-scoped caller sees only its tenant's (targets.ts visibleTo). */
const targetVisible = (caller: Caller, target: Target): boolean =>
  caller.tenantId === null || target.tenantId === caller.tenantId;

/** Whether the target is in the deployment's scope: the same tenant (or both none), and the environment if one is set. */
const inScope = (target: Target, scope: Scope): boolean =>
  target.tenantId === (scope.tenant?.id ?? null) &&
  (scope.environment === null || target.environmentId === scope.environment.id);

export const resolveTargets = async (
  deps: PlanDeps,
  caller: Caller,
  scope: Scope,
  command: CreateDeploymentCommand,
  problems: FieldProblem[],
): Promise<Target[]> => {
  const before = problems.length;
  const chosen = new Map<string, Target>();
  const ids = command.target_ids ?? [];
  for (const [index, id] of ids.entries()) {
    const field = `target_ids.${index}`;
    const target = await deps.targets.find(id);
    if (target === undefined || !targetVisible(caller, target))
      problems.push(problem(field, `Target '${id}' does not exist.`));
    else if (target.tenantId !== (scope.tenant?.id ?? null)) {
      problems.push(
        problem(
          field,
          scope.tenant === null
            ? `Target '${target.name}' belongs to a tenant: give that tenant's tenant_id.`
            : `Target '${target.name}' is not a target of tenant '${scope.tenant.name}'.`,
        ),
      );
    } else if (!inScope(target, scope))
      problems.push(
        problem(field, `Target '${target.name}' is not in environment '${scope.environment?.name ?? ''}'.`),
      );
    else chosen.set(target.id, target);
  }
  const tags = command.target_tags ?? [];
  if (tags.length > 0) {
    const all = command.target_tags_match_all ?? CONFIG_DEFAULTS.targetTagsMatchAll;
    for (const target of await deps.targets.listAll()) {
      if (targetVisible(caller, target) && inScope(target, scope) && matchesTags(target.tags, tags, all))
        chosen.set(target.id, target);
    }
  }
  const targets = [...chosen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  if (targets.length === 0 && problems.length === before) {
    const wanted = tags
      .map((t) => `${t.key}=${t.value}`)
      .join(command.target_tags_match_all === true ? ' and ' : ' or ');
    const where = [
      scope.tenant === null ? 'without a tenant' : `of tenant '${scope.tenant.name}'`,
      scope.environment === null ? '' : `in environment '${scope.environment.name}'`,
    ]
      .filter((s) => s !== '')
      .join(' ');
    problems.push(
      problem(
        tags.length > 0 ? 'target_tags' : 'target_ids',
        `No target matches: no target ${where} carries ${wanted || 'the tags'}.`,
      ),
    );
  }
  return targets;
};

const ago = (from: string, now: Date): string => {
  const seconds = Math.max(0, Math.round((now.getTime() - Date.parse(from)) / 1000));
  if (seconds < 120) return `${seconds} s ago`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} days ago`;
};

export const targetWarnings = (
  targets: readonly Target[],
  now: Date,
): { summary: TargetSummary; warnings: string[] } => {
  const counts = { online: 0, offline: 0, stale: 0 };
  const warnings: string[] = [];
  for (const target of targets) {
    const status = statusOf(target, now);
    counts[status] += 1;
    if (target.lastHeartbeatAt === null) warnings.push(`Target '${target.name}' is offline: no agent ever connected.`);
    else if (status !== 'online')
      warnings.push(
        `Target '${target.name}' is ${status}: its agent was last seen ${ago(target.lastHeartbeatAt, now)} (${target.lastHeartbeatAt}).`,
      );
  }
  return { summary: { total: targets.length, ...counts }, warnings };
};
