// The vocabulary the phases of `decide` share (decide.ts): what a decision holds, the events and signals it names, and
// one pass's working state (the steps as the phases change them, in the order they first changed). A leaf: the phase
// files (decide-results.ts, decide-start.ts, decide-end.ts) and decide.ts import it, it imports none of them.
import type { Command } from '../targets/types.js';
import type { Deployment, DeploymentState, OutboxEntry, PlanStep, StepScript } from './types.js';

/** The exit code of a step stopped by the deployment's timeout. */
export const TIMEOUT_EXIT_CODE = 124;
/** A command still queued this long after its creation gets its target's agent woken again (each periodic check). */
export const REWAKE_AFTER_MS = 5_000;

/** The id of a step's command for an attempt: a retried or repeated pass creates it only if absent. */
export const commandIdOf = (stepId: string, attempt: number): string => `${stepId}-a${attempt}`;

/** What happened, for the event stream (step_update, progress, state_change). */
export type EngineEvent =
  | { readonly type: 'step_update'; readonly step: PlanStep }
  | { readonly type: 'progress'; readonly deployment: Deployment; readonly message: string }
  | {
      readonly type: 'state_change';
      readonly deploymentId: string;
      readonly oldState: DeploymentState;
      readonly newState: DeploymentState;
      readonly message: string;
    };

/** An action version in the catalog (a plan without pinned scripts). */
export interface ScriptRef {
  readonly actionId: string;
  readonly version: string;
}

export const scriptKey = (ref: ScriptRef): string => `${ref.actionId}\u0000${ref.version}`;

/** Done before the deployment is written, in this order. */
export type AgentSignal =
  | { readonly kind: 'wake_agent'; readonly targetId: string }
  /** A command pushed to its agent's socket and not acknowledged REWAKE_AFTER_MS later: pushed again. */
  | { readonly kind: 'push_again'; readonly command: Command }
  | { readonly kind: 'cancel_command'; readonly commandId: string };

export interface Decision {
  readonly kind: 'decision';
  /** Agents woken again (a command still queued) and commands stopped (target gone, deployment timed out). */
  readonly signals: readonly AgentSignal[];
  /** Commands to enqueue (idempotent by id), before the deployment is written. */
  readonly launches: readonly Command[];
  /** The steps this pass changed, as they are now, in the order they first changed. */
  readonly changedSteps: readonly PlanStep[];
  /** The deployment to write, conditioned on the revision read; undefined when nothing changed (no write, no event). */
  readonly next: Deployment | undefined;
  /** When `next` ends the deployment: what the end owes (written with it, then settled). */
  readonly owed: OutboxEntry | undefined;
  /** Published once `next` is written. */
  readonly events: readonly EngineEvent[];
}

/** The catalog scripts a plan without pins needs before `decide` can answer: read them, then decide again. */
export interface ScriptsNeeded {
  readonly kind: 'read_scripts';
  readonly refs: readonly ScriptRef[];
}

export const FINISHED: ReadonlySet<PlanStep['state']> = new Set([
  'completed',
  'failed',
  'skipped',
  'cancelled',
  'rolled_back',
]);

/** Milliseconds from an ISO time to `to`, or null without a start. */
export const elapsed = (from: string | null, to: Date): number | null =>
  from === null ? null : to.getTime() - Date.parse(from);

/** The catalog versions of `steps` not read yet, each once. */
export const unread = (
  catalog: ReadonlyMap<string, StepScript | undefined>,
  steps: readonly Pick<PlanStep, 'actionId' | 'actionVersion'>[],
): ScriptRef[] => {
  const refs = new Map<string, ScriptRef>();
  for (const s of steps) {
    const ref = { actionId: s.actionId, version: s.actionVersion };
    if (!catalog.has(scriptKey(ref))) refs.set(scriptKey(ref), ref);
  }
  return [...refs.values()];
};

/** One pass's working state: the phases change steps through `setStep` and `finishStep`, and add signals and launches. */
export interface Pass {
  readonly deployment: Deployment;
  readonly now: Date;
  /** `now` as stored. */
  readonly at: string;
  /** Every step by id, as the phases left it (plan order kept). */
  readonly steps: Map<string, PlanStep>;
  /** The ids of the steps changed, in the order they first changed. */
  readonly changed: Set<string>;
  readonly signals: AgentSignal[];
  readonly launches: Command[];
}

export const newPass = (deployment: Deployment, now: Date): Pass => ({
  deployment,
  now,
  at: now.toISOString(),
  steps: new Map(deployment.plan.steps.map((s) => [s.id, s] as const)),
  changed: new Set<string>(),
  signals: [],
  launches: [],
});

/** Every step as it is now, in plan order. */
export const stepsOf = (pass: Pass): PlanStep[] => [...pass.steps.values()];

/** A step as it is now, by id. */
export const stepNow = (pass: Pass, step: Pick<PlanStep, 'id'>): PlanStep => pass.steps.get(step.id) as PlanStep;

export const setStep = (pass: Pass, step: PlanStep): void => {
  pass.steps.set(step.id, step);
  pass.changed.add(step.id);
};

export const finishStep = (
  pass: Pass,
  step: PlanStep,
  state: 'completed' | 'failed',
  exitCode: number | null,
  errorMessage: string | null,
): void =>
  setStep(pass, {
    ...step,
    state,
    exitCode,
    errorMessage,
    completedAt: pass.at,
    durationMs: elapsed(step.startedAt, pass.now),
  });
