// The last phase of `decide` (decide.ts) and its answer: whether the deployment is over (success, failed, or a
// failure that first rolls back: rolling_back, then rolled_back), and the decision that says so: the deployment to
// write, what its end owes, and the events to publish.
import type { Timeout } from './decide-results.js';
import type { Launcher } from './decide-start.js';
import {
  elapsed,
  FINISHED,
  setStep,
  stepNow,
  stepsOf,
  unread,
  type Decision,
  type EngineEvent,
  type Pass,
  type ScriptsNeeded,
} from './decide-pass.js';
import { owedBy } from './outbox.js';
import { UNSTARTED } from './plan/steps.js';
import type { Deployment, DeploymentState, PlanStep, StepScript } from './types.js';

/**
 * The executed steps a rollback undoes: every forward step that ran (completed or failed), on the failed targets
 * only or on every target, newest first (steps started in the same instant: the later in plan order first).
 */
const executedSteps = (steps: readonly PlanStep[], strategy: 'failed_target_only' | 'all_executed'): PlanStep[] => {
  const failedTargets = new Set(steps.filter((s) => s.state === 'failed').map((s) => s.targetId));
  const position = new Map(steps.map((s, i) => [s.id, i] as const));
  return steps
    .filter(
      (s) => s.rollbackOf === undefined && (s.state === 'completed' || s.state === 'failed') && s.startedAt !== null,
    )
    .filter((s) => strategy === 'all_executed' || failedTargets.has(s.targetId))
    .sort(
      (a, b) =>
        (b.startedAt as string).localeCompare(a.startedAt as string) ||
        (position.get(b.id) ?? 0) - (position.get(a.id) ?? 0),
    );
};

/** The rollback steps of executed steps whose action version has a rollback script, in the same order. */
const rollbackSteps = (
  executed: readonly PlanStep[],
  scriptOf: (step: PlanStep) => StepScript | undefined,
): PlanStep[] =>
  executed
    .filter((step) => {
      const script = scriptOf(step);
      return script !== undefined && script.rollbackScript !== null;
    })
    .map((step): PlanStep => ({
      ...step,
      id: `${step.id}-rollback`,
      rollbackOf: step.id,
      ...UNSTARTED,
    }));

/** Where the pass leaves the deployment. */
export interface End {
  /** Every step, rollback steps included. */
  readonly final: readonly PlanStep[];
  readonly counts: { readonly completedSteps: number; readonly failedSteps: number };
  /** Every step finished: the deployment ends. */
  readonly over: boolean;
  /** Forward steps failed and the strategy does not ignore failures. */
  readonly failed: boolean;
  readonly nextState: DeploymentState;
  readonly errorMessage: string | null;
}

/** The error of a deployment whose rollback ended: the original one, and what went wrong during the rollback. */
const rollbackEndMessage = (deployment: Deployment, timeout: Timeout, rollbackFailed: boolean): string | null => {
  const original = (deployment.errorMessage ?? 'The deployment failed').replace(/\.$/, '');
  if (timeout.timedOut) return `${original}; during the rollback: ${timeout.message}`;
  return rollbackFailed ? `${original}; the rollback failed too.` : deployment.errorMessage;
};

/**
 * Phase 5: finished? A failure with a rollback strategy first rolls back: its rollback steps are added and the first
 * launched (rolling_back); the end of a rollback is rolled_back, or failed.
 */
export const endOf = (
  pass: Pass,
  timeout: Timeout,
  catalog: ReadonlyMap<string, StepScript | undefined>,
  { scriptOf, launch }: Launcher,
): End | ScriptsNeeded => {
  const { deployment } = pass;
  const { config } = deployment;
  const final = stepsOf(pass);
  const forward = final.filter((s) => s.rollbackOf === undefined);
  const counts = {
    completedSteps: forward.filter((s) => s.state === 'completed').length,
    failedSteps: forward.filter((s) => s.state === 'failed').length,
  };
  const over = final.every((s) => FINISHED.has(s.state));
  const failed = counts.failedSteps > 0 && config.failureStrategy !== 'ignore_failures';
  const nextState: DeploymentState = over ? (failed || timeout.timedOut ? 'failed' : 'success') : deployment.state;
  const errorMessage = timeout.timedOut ? timeout.message : null;
  const end = { final, counts, over, failed, nextState, errorMessage };
  if (over && deployment.state === 'rolling_back') {
    const rollbackFailed = final.some((s) => s.rollbackOf !== undefined && s.state === 'failed');
    return {
      ...end,
      nextState: rollbackFailed || timeout.timedOut ? 'failed' : 'rolled_back',
      errorMessage: rollbackEndMessage(deployment, timeout, rollbackFailed),
    };
  }
  if (!over || nextState !== 'failed' || timeout.timedOut || config.rollbackStrategy === 'none') return end;
  const executed = executedSteps(final, config.rollbackStrategy);
  if (deployment.plan.scripts === undefined) {
    const refs = unread(catalog, executed);
    if (refs.length > 0) return { kind: 'read_scripts', refs };
  }
  const rollback = rollbackSteps(executed, scriptOf);
  if (rollback.length === 0) return end;
  for (const r of rollback) setStep(pass, r);
  const first = rollback[0] as PlanStep;
  setStep(pass, { ...first, state: 'running', startedAt: pass.at });
  launch(stepNow(pass, first), 1);
  return {
    ...end,
    final: stepsOf(pass),
    over: false,
    nextState: 'rolling_back',
    errorMessage: errorMessage ?? `${counts.failedSteps} step(s) failed.`,
  };
};

/** The events of a pass that writes `next`, in order: the start (first pass), each changed step, progress, the state. */
const passEvents = (pass: Pass, next: Deployment, end: End, changedSteps: readonly PlanStep[]): EngineEvent[] => {
  const { deployment } = pass;
  return [
    // The first pass of a new deployment announces it.
    ...(deployment.revision === 1
      ? [
          {
            type: 'state_change' as const,
            deploymentId: deployment.id,
            oldState: 'pending' as const,
            newState: 'running' as const,
            message: `Deployment started on ${deployment.instanceId ?? 'an instance'}.`,
          },
        ]
      : []),
    ...changedSteps.map((step) => ({ type: 'step_update' as const, step })),
    {
      type: 'progress',
      deployment: next,
      message: `${end.counts.completedSteps + end.counts.failedSteps} of ${end.final.length} step(s) finished`,
    },
    ...(end.nextState !== deployment.state
      ? [
          {
            type: 'state_change' as const,
            deploymentId: deployment.id,
            oldState: deployment.state,
            newState: end.nextState,
            message: next.errorMessage ?? 'All steps completed.',
          },
        ]
      : []),
  ];
};

/** The decision of a pass: nothing to write when no step and not the state changed; else `next`, its events, its debt. */
export const decisionOf = (pass: Pass, end: End): Decision => {
  const { deployment, now, at, signals, launches } = pass;
  const changedSteps = [...pass.changed].map((id) => pass.steps.get(id) as PlanStep);
  if (pass.changed.size === 0 && end.nextState === deployment.state)
    return { kind: 'decision', signals, launches, changedSteps, next: undefined, owed: undefined, events: [] };
  const { final, over, failed, nextState, errorMessage, counts } = end;
  const next: Deployment = {
    ...deployment,
    ...counts,
    plan: { ...deployment.plan, steps: stepsOf(pass) },
    progress: final.length === 0 ? 1 : final.filter((s) => FINISHED.has(s.state)).length / final.length,
    totalSteps: final.length,
    state: nextState,
    completedAt: over ? at : null,
    durationMs: over ? elapsed(deployment.startedAt, now) : null,
    errorMessage:
      (over || nextState === 'rolling_back') && failed
        ? (errorMessage ?? `${counts.failedSteps} step(s) failed.`)
        : errorMessage,
    revision: deployment.revision + 1,
    passFailures: undefined,
  };
  return {
    kind: 'decision',
    signals,
    launches,
    changedSteps,
    next,
    owed: over ? owedBy(deployment, next) : undefined,
    events: passEvents(pass, next, end, changedSteps),
  };
};
