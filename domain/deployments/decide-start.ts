// The middle phases of `decide` (decide.ts): which steps may start now (target mode, failure strategy, a rollback
// one step at a time), and starting them: each start or retry becomes a command, idempotent by id, before the
// deployment records it.
import type { Command } from '../targets/types.js';
import {
  commandIdOf,
  finishStep,
  FINISHED,
  scriptKey,
  setStep,
  stepNow,
  stepsOf,
  unread,
  type Pass,
  type ScriptsNeeded,
} from './decide-pass.js';
import type { PlanStep, StepScript } from './types.js';

/** Targets in plan order, each with its steps in plan order. */
const byTarget = (steps: readonly PlanStep[]): Map<string, PlanStep[]> => {
  const groups = new Map<string, PlanStep[]>();
  for (const step of steps) groups.set(step.targetId, [...(groups.get(step.targetId) ?? []), step]);
  return groups;
};

/** The targets whose next step may start: all (parallel), else the first batch with work left. */
const eligibleTargets = (pass: Pass, groups: ReadonlyMap<string, readonly PlanStep[]>): string[] => {
  const { targetMode } = pass.deployment.config;
  const order = [...groups.keys()];
  if (targetMode === 'parallel') return order;
  const size = targetMode === 'sequential' ? 1 : Math.max(1, targetMode.rolling.batch_size);
  const batches = Array.from({ length: Math.ceil(order.length / size) }, (_, i) =>
    order.slice(i * size, i * size + size),
  );
  // The current batch: the first with work left; a target that stopped on a failure counts as done.
  const settled = (id: string) => (groups.get(id) ?? []).every((s) => FINISHED.has(stepNow(pass, s).state));
  return batches.find((batch) => !batch.every(settled)) ?? [];
};

/**
 * Phase 3: what may start now. continue_on_failure: a target with a failed step runs nothing more. A rollback runs
 * its steps one at a time. stop_on_first_failure: nothing new starts, and waiting steps are skipped once nothing runs.
 */
export const stepsToStart = (pass: Pass, timedOut: boolean): PlanStep[] => {
  const { config, state } = pass.deployment;
  const strategy = config.failureStrategy;
  const failedAny = stepsOf(pass).some((s) => s.state === 'failed');
  const groups = byTarget(stepsOf(pass).filter((s) => s.rollbackOf === undefined));
  const rollingBack = state === 'rolling_back';
  const toStart: PlanStep[] = [];
  if (strategy === 'continue_on_failure' && !rollingBack) {
    for (const list of groups.values())
      if (list.some((s) => s.state === 'failed'))
        for (const s of list.filter((s) => s.state === 'pending')) setStep(pass, { ...s, state: 'skipped' });
  }
  if (rollingBack) {
    // Rollback steps run one at a time, in the order they were added (reverse of execution).
    const rollback = stepsOf(pass).filter((s) => s.rollbackOf !== undefined);
    const next = rollback.find((s) => s.state === 'pending');
    if (!rollback.some((s) => s.state === 'running') && next !== undefined) toStart.push(next);
  } else if (!timedOut && !(strategy === 'stop_on_first_failure' && failedAny)) {
    for (const targetId of eligibleTargets(pass, groups)) {
      const list = (groups.get(targetId) ?? []).map((s) => stepNow(pass, s));
      if (list.some((s) => s.state === 'running')) continue;
      const next = list.find((s) => s.state === 'pending');
      if (next !== undefined) toStart.push(next);
    }
  }
  if (
    !rollingBack &&
    strategy === 'stop_on_first_failure' &&
    failedAny &&
    !stepsOf(pass).some((s) => s.state === 'running')
  ) {
    for (const s of stepsOf(pass).filter((s) => s.state === 'pending')) setStep(pass, { ...s, state: 'skipped' });
  }
  return toStart;
};

/** How a pass turns steps into commands: the script each runs, and its launch. */
export interface Launcher {
  /** The script a step runs: the one pinned in the plan; the catalog's for a plan made before scripts were pinned. */
  readonly scriptOf: (step: PlanStep) => StepScript | undefined;
  /** The step's command for `attempt` added to the launches; a step whose script no longer exists fails instead. */
  readonly launch: (step: PlanStep, attempt: number) => void;
}

export const launcher = (pass: Pass, catalog: ReadonlyMap<string, StepScript | undefined>): Launcher => {
  const { deployment, at } = pass;
  const pinned = deployment.plan.scripts;
  // Secret values stay sealed in the command record; the poll answer opens them for the claiming agent only.
  const variables = Object.fromEntries(
    Object.entries(deployment.plan.resolvedVariables).map(([name, v]) => [name, v.value]),
  );
  const secrets = Object.entries(deployment.plan.resolvedVariables)
    .filter(([, v]) => v.secret)
    .map(([name]) => name);
  const scriptOf = (step: PlanStep): StepScript | undefined => {
    if (pinned !== undefined)
      return Object.hasOwn(pinned, step.actionVersionId) ? pinned[step.actionVersionId] : undefined;
    return catalog.get(scriptKey({ actionId: step.actionId, version: step.actionVersion }));
  };
  const launch = (step: PlanStep, attempt: number): void => {
    const found = scriptOf(step);
    const script =
      found === undefined || step.rollbackOf === undefined
        ? found
        : found.rollbackScript === null
          ? undefined
          : { ...found, script: found.rollbackScript };
    if (script === undefined) {
      finishStep(
        pass,
        step,
        'failed',
        null,
        `Version ${step.actionVersion} of action ${step.actionName} no longer exists.`,
      );
      return;
    }
    const command: Command = {
      id: commandIdOf(step.id, attempt),
      targetId: step.targetId,
      targetName: step.targetName,
      deploymentId: deployment.id,
      stepId: step.id,
      attempt,
      action: { id: step.actionId, slug: step.actionSlug, version: step.actionVersion },
      script: script.script,
      interpreter: script.interpreter,
      variables,
      secretVariables: secrets,
      sealedSecrets: true,
      timeoutSeconds: script.timeoutSeconds ?? deployment.config.timeoutSeconds,
      status: 'queued',
      createdAt: at,
      deliveredAt: null,
      cancelRequestedAt: null,
      outputSeq: -1,
      result: null,
    };
    pass.launches.push(command);
  };
  return { scriptOf, launch };
};

/**
 * Phase 4: steps started (and retries launched): the retries changed by phase 1 get their next attempt, the steps of
 * phase 3 their first. A plan without pinned scripts first asks for the catalog versions it has not read.
 */
export const startSteps = (
  pass: Pass,
  toStart: readonly PlanStep[],
  catalog: ReadonlyMap<string, StepScript | undefined>,
  { launch }: Launcher,
): ScriptsNeeded | undefined => {
  const retries = stepsOf(pass).filter((s) => s.state === 'running' && pass.changed.has(s.id));
  for (const step of toStart) setStep(pass, { ...step, state: 'running', startedAt: pass.at });
  const starting = toStart.map((step) => stepNow(pass, step));
  if (pass.deployment.plan.scripts === undefined) {
    const refs = unread(catalog, [...retries, ...starting]);
    if (refs.length > 0) return { kind: 'read_scripts', refs };
  }
  for (const step of retries) launch(step, step.retryCount + 1);
  for (const step of starting) launch(step, 1);
  return undefined;
};
