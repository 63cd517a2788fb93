// The steps of a plan: one per target x planned action, target by target, each not yet started.
import type { Target } from '../../targets/types.js';
import type { Uuids } from '../ports.js';
import type { PlanStep } from '../types.js';
import type { PlannedAction } from './sources.js';

/** The run fields of a step that has not started (a planned step, a rollback step). */
export const UNSTARTED = {
  state: 'pending',
  startedAt: null,
  completedAt: null,
  exitCode: null,
  errorMessage: null,
  retryCount: 0,
  durationMs: null,
} as const satisfies Partial<PlanStep>;

export const planSteps = (uuids: Uuids, targets: readonly Target[], actions: readonly PlannedAction[]): PlanStep[] =>
  targets.flatMap((target) =>
    actions.map((planned): PlanStep => ({
      id: uuids.uuid(),
      targetId: target.id,
      targetName: target.name,
      sequenceId: planned.sequence?.id ?? null,
      sequenceName: planned.sequence?.name ?? null,
      sequenceOrder: planned.sequence?.order ?? 1,
      actionId: planned.action.id,
      actionName: planned.action.name,
      actionSlug: planned.action.slug,
      actionOrder: planned.order,
      actionVersion: planned.version.version,
      actionVersionId: planned.version.id,
      ...UNSTARTED,
    })),
  );
