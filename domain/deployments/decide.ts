// The engine's decision, pure: given a running deployment, the current command of each step, the targets of the steps
// still waiting on their agent and the time, what one pass does. No ports, no promises: engine.ts reads, calls
// `decide`, and applies what it returns (agents woken and commands stopped, commands enqueued, the deployment written
// conditioned on the revision read, events published, what an end owes settled), in that order.
//
// In order, as a pass does it: collect finished commands (success, retry, or failure), fail steps whose target
// stopped answering and everything at the overall deployment timeout, start the next steps the target mode and
// failure strategy allow, and finish the deployment when nothing is left (or start its rollback).
//
// A plan made before scripts were pinned takes its scripts from the catalog: `decide` then asks for the ones it needs
// (`read_scripts`) and is called again with them, so a pass reads the catalog only when it starts something.
import { agentGone } from '../targets/status.js';
import type { Command, Target } from '../targets/types.js';
import { owedBy } from './outbox.js';
import { UNSTARTED } from './plan/steps.js';
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

export interface DecideOptions {
  /** The ceiling applied when deployment_timeout_seconds is 0 (DEPLOYMENT_MAX_SECONDS). */
  readonly maxDeploymentSeconds: number;
  /**
   * A periodic check (not a pass caused by an event): only checks wake agents again and push again what was not
   * acknowledged, so a burst of completions does not repeat them once per completion.
   */
  readonly check?: boolean;
  /**
   * For a plan without pinned scripts: the catalog's scripts read so far, by scriptKey (undefined: the version no
   * longer exists). Ignored when the plan pins its scripts.
   */
  readonly catalog?: ReadonlyMap<string, StepScript | undefined>;
}

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

const FINISHED: ReadonlySet<PlanStep['state']> = new Set([
  'completed',
  'failed',
  'skipped',
  'cancelled',
  'rolled_back',
]);

/** Targets in plan order, each with its steps in plan order. */
const byTarget = (steps: readonly PlanStep[]): Map<string, PlanStep[]> => {
  const groups = new Map<string, PlanStep[]>();
  for (const step of steps) groups.set(step.targetId, [...(groups.get(step.targetId) ?? []), step]);
  return groups;
};

/**
 * The command of each step's current attempt (retry_count + 1), by step id. Not the latest one listed: the list may
 * lag behind (it is read from an index), and a step whose new attempt is not listed yet must not be judged again on
 * the previous attempt's result (retried a second time, or failed while its retry runs).
 */
export const currentCommands = (steps: readonly PlanStep[], commands: readonly Command[]): Map<string, Command> => {
  const attempts = new Map(steps.map((s) => [s.id, s.retryCount + 1] as const));
  const current = new Map<string, Command>();
  for (const c of commands) if (attempts.get(c.stepId) === c.attempt) current.set(c.stepId, c);
  return current;
};

/** Milliseconds from an ISO time to `to`, or null without a start. */
export const elapsed = (from: string | null, to: Date): number | null =>
  from === null ? null : to.getTime() - Date.parse(from);

/** A running step's command still waits on its agent: neither reported nor cancelled. */
const waitsOnAgent = (command: Command | undefined): command is Command =>
  command !== undefined &&
  command.status !== 'cancelled' &&
  !(command.status === 'completed' && command.result !== null);

/** The targets `decide` needs (read in one batch): those of running steps whose command still waits on its agent. */
export const targetsToRead = (deployment: Pick<Deployment, 'plan'>, commands: ReadonlyMap<string, Command>): string[] =>
  deployment.plan.steps.filter((s) => s.state === 'running' && waitsOnAgent(commands.get(s.id))).map((s) => s.targetId);

/** The catalog versions of `steps` not read yet, each once. */
const unread = (
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

/**
 * One pass of the engine over a deployment that is not terminal: what to signal, launch and write, and the events.
 * `commands` holds the command of each step's current attempt (currentCommands); `targets` at least those of
 * targetsToRead (one missing there was deleted).
 */
export const decide = (
  deployment: Deployment,
  commands: ReadonlyMap<string, Command>,
  targets: ReadonlyMap<string, Target>,
  now: Date,
  options: DecideOptions,
): Decision | ScriptsNeeded => {
  const at = now.toISOString();
  const config = deployment.config;
  const pinned = deployment.plan.scripts;
  const catalog = options.catalog ?? new Map<string, StepScript | undefined>();
  const steps = new Map(deployment.plan.steps.map((s) => [s.id, s] as const));
  const changed = new Set<string>();
  const signals: AgentSignal[] = [];
  const launches: Command[] = [];
  const set = (step: PlanStep) => {
    steps.set(step.id, step);
    changed.add(step.id);
  };
  const finishStep = (
    step: PlanStep,
    state: 'completed' | 'failed',
    exitCode: number | null,
    errorMessage: string | null,
  ) => set({ ...step, state, exitCode, errorMessage, completedAt: at, durationMs: elapsed(step.startedAt, now) });
  let errorMessage: string | null = null;

  // 1. Results of running steps; targets that stopped answering.
  const running = [...steps.values()].filter((s) => s.state === 'running');
  for (const step of running) {
    const command = commands.get(step.id);
    if (command?.status === 'completed' && command.result !== null) {
      const { exitCode, errorMessage: reported } = command.result;
      if (exitCode === 0) finishStep(step, 'completed', 0, null);
      else if (step.retryCount < config.maxRetries)
        set({ ...step, retryCount: step.retryCount + 1, exitCode, errorMessage: reported ?? `exit code ${exitCode}` });
      else finishStep(step, 'failed', exitCode, reported ?? `The command exited with code ${exitCode}.`);
    } else if (command?.status === 'cancelled') {
      finishStep(step, 'failed', null, 'The command was cancelled before it started.');
    } else if (command !== undefined) {
      const target = targets.get(step.targetId);
      const gone = target === undefined ? undefined : agentGone(target, command.createdAt, now);
      if (
        options.check !== false &&
        gone === undefined &&
        command.status === 'queued' &&
        now.getTime() - Date.parse(command.createdAt) >= REWAKE_AFTER_MS
      )
        signals.push({ kind: 'wake_agent', targetId: step.targetId });
      if (
        options.check !== false &&
        gone === undefined &&
        command.status === 'delivered' &&
        command.pushedTo !== undefined &&
        command.cancelRequestedAt === null &&
        now.getTime() - Date.parse(command.pushedTo.at) >= REWAKE_AFTER_MS
      )
        signals.push({ kind: 'push_again', command });
      if (target === undefined || gone !== undefined) {
        signals.push({ kind: 'cancel_command', commandId: command.id });
        finishStep(
          step,
          'failed',
          null,
          target === undefined
            ? `Target ${step.targetName} was deleted while the step ran.`
            : `Target ${step.targetName} is not answering: ${gone}.`,
        );
      }
    }
  }

  // 2. The overall timeout: the deployment's own, else the service's ceiling.
  const ceiling = config.deploymentTimeoutSeconds === 0;
  const limitSeconds = ceiling ? options.maxDeploymentSeconds : config.deploymentTimeoutSeconds;
  const timedOut =
    deployment.startedAt !== null && now.getTime() - Date.parse(deployment.startedAt) >= limitSeconds * 1000;
  const timeoutMessage = ceiling
    ? `The deployment reached the service's ceiling of ${limitSeconds} s (DEPLOYMENT_MAX_SECONDS; it set no deployment_timeout_seconds); running commands were stopped.`
    : `The deployment timed out after ${limitSeconds} s; running commands were stopped.`;
  if (timedOut) {
    errorMessage = timeoutMessage;
    for (const step of [...steps.values()]) {
      if (step.state === 'running') {
        const command = commands.get(step.id);
        if (command !== undefined) signals.push({ kind: 'cancel_command', commandId: command.id });
        finishStep(
          step,
          'failed',
          TIMEOUT_EXIT_CODE,
          ceiling
            ? "Stopped: the deployment reached the service's time ceiling."
            : 'Stopped: the deployment timed out.',
        );
      } else if (step.state === 'pending') set({ ...step, state: 'skipped' });
    }
  }

  // 3. What may start now.
  const all = () => [...steps.values()];
  const failedAny = all().some((s) => s.state === 'failed');
  const strategy = config.failureStrategy;
  const groups = byTarget(all().filter((s) => s.rollbackOf === undefined));
  const targetDone = (list: readonly PlanStep[]) => list.every((s) => FINISHED.has(s.state));
  const targetFailed = (list: readonly PlanStep[]) => list.some((s) => s.state === 'failed');
  const toStart: PlanStep[] = [];
  // continue_on_failure: a target with a failed step runs nothing more.
  if (strategy === 'continue_on_failure' && deployment.state !== 'rolling_back') {
    for (const list of groups.values())
      if (targetFailed(list))
        for (const s of list.filter((s) => s.state === 'pending')) set({ ...s, state: 'skipped' });
  }
  const rollingBack = deployment.state === 'rolling_back';
  if (rollingBack) {
    // Rollback steps run one at a time, in the order they were added (reverse of execution).
    const rollback = all().filter((s) => s.rollbackOf !== undefined);
    const next = rollback.find((s) => s.state === 'pending');
    if (!rollback.some((s) => s.state === 'running') && next !== undefined) toStart.push(next);
  } else if (!timedOut && !(strategy === 'stop_on_first_failure' && failedAny)) {
    const order = [...groups.keys()];
    let eligible: string[];
    if (config.targetMode === 'parallel') eligible = order;
    else {
      const size = config.targetMode === 'sequential' ? 1 : Math.max(1, config.targetMode.rolling.batch_size);
      const batches = Array.from({ length: Math.ceil(order.length / size) }, (_, i) =>
        order.slice(i * size, i * size + size),
      );
      // The current batch: the first with work left; a target that stopped on a failure counts as done.
      const settled = (id: string) => targetDone((groups.get(id) ?? []).map((s) => steps.get(s.id) as PlanStep));
      eligible = batches.find((batch) => !batch.every(settled)) ?? [];
    }
    for (const targetId of eligible) {
      const list = (groups.get(targetId) ?? []).map((s) => steps.get(s.id) as PlanStep);
      if (list.some((s) => s.state === 'running')) continue;
      const next = list.find((s) => s.state === 'pending');
      if (next !== undefined) toStart.push(next);
    }
  }
  // A stop on the first failure: nothing new starts, waiting steps are skipped once nothing runs.
  if (!rollingBack && strategy === 'stop_on_first_failure' && failedAny && !all().some((s) => s.state === 'running')) {
    for (const s of all().filter((s) => s.state === 'pending')) set({ ...s, state: 'skipped' });
  }

  // 4. Start steps (and retries): commands first, idempotent by id, then the deployment records it.
  // Secret values stay sealed in the command record; the poll answer opens them for the claiming agent only.
  const variables = Object.fromEntries(
    Object.entries(deployment.plan.resolvedVariables).map(([name, v]) => [name, v.value]),
  );
  const secrets = Object.entries(deployment.plan.resolvedVariables)
    .filter(([, v]) => v.secret)
    .map(([name]) => name);
  /** The script a step runs: the one pinned in the plan; the catalog's for a plan made before scripts were pinned. */
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
      finishStep(step, 'failed', null, `Version ${step.actionVersion} of action ${step.actionName} no longer exists.`);
      return;
    }
    launches.push({
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
      timeoutSeconds: script.timeoutSeconds ?? config.timeoutSeconds,
      status: 'queued',
      createdAt: at,
      deliveredAt: null,
      cancelRequestedAt: null,
      outputSeq: -1,
      result: null,
    });
  };
  const retries = all().filter((s) => s.state === 'running' && changed.has(s.id));
  for (const step of toStart) set({ ...step, state: 'running', startedAt: at });
  const starting = toStart.map((step) => steps.get(step.id) as PlanStep);
  if (pinned === undefined) {
    const refs = unread(catalog, [...retries, ...starting]);
    if (refs.length > 0) return { kind: 'read_scripts', refs };
  }
  for (const step of retries) launch(step, step.retryCount + 1);
  for (const step of starting) launch(step, 1);

  // 5. Finished? A failure with a rollback strategy first rolls back (rolling_back), then ends rolled_back.
  let final = all();
  const forward = final.filter((s) => s.rollbackOf === undefined);
  const counts = {
    completedSteps: forward.filter((s) => s.state === 'completed').length,
    failedSteps: forward.filter((s) => s.state === 'failed').length,
  };
  let over = final.every((s) => FINISHED.has(s.state));
  const failed = counts.failedSteps > 0 && strategy !== 'ignore_failures';
  let nextState: DeploymentState = over ? (failed || timedOut ? 'failed' : 'success') : deployment.state;
  if (over && rollingBack) {
    const rollbackFailed = final.some((s) => s.rollbackOf !== undefined && s.state === 'failed');
    nextState = rollbackFailed || timedOut ? 'failed' : 'rolled_back';
    errorMessage = timedOut
      ? `${(deployment.errorMessage ?? 'The deployment failed').replace(/\.$/, '')}; during the rollback: ${timeoutMessage}`
      : rollbackFailed
        ? `${(deployment.errorMessage ?? 'The deployment failed').replace(/\.$/, '')}; the rollback failed too.`
        : deployment.errorMessage;
  } else if (over && nextState === 'failed' && !timedOut && config.rollbackStrategy !== 'none') {
    const executed = executedSteps(final, config.rollbackStrategy);
    if (pinned === undefined) {
      const refs = unread(catalog, executed);
      if (refs.length > 0) return { kind: 'read_scripts', refs };
    }
    const rollback = rollbackSteps(executed, scriptOf);
    if (rollback.length > 0) {
      for (const r of rollback) set(r);
      errorMessage ??= `${counts.failedSteps} step(s) failed.`;
      const first = rollback[0] as PlanStep;
      set({ ...first, state: 'running', startedAt: at });
      launch(steps.get(first.id) as PlanStep, 1);
      final = all();
      over = false;
      nextState = 'rolling_back';
    }
  }
  const changedSteps = [...changed].map((id) => steps.get(id) as PlanStep);
  if (changed.size === 0 && nextState === deployment.state)
    return { kind: 'decision', signals, launches, changedSteps, next: undefined, owed: undefined, events: [] };

  const progress = final.length === 0 ? 1 : final.filter((s) => FINISHED.has(s.state)).length / final.length;
  const next: Deployment = {
    ...deployment,
    ...counts,
    plan: { ...deployment.plan, steps: [...steps.values()] },
    progress,
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
  const events: EngineEvent[] = [
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
      message: `${counts.completedSteps + counts.failedSteps} of ${final.length} step(s) finished`,
    },
    ...(nextState !== deployment.state
      ? [
          {
            type: 'state_change' as const,
            deploymentId: deployment.id,
            oldState: deployment.state,
            newState: nextState,
            message: next.errorMessage ?? 'All steps completed.',
          },
        ]
      : []),
  ];
  return {
    kind: 'decision',
    signals,
    launches,
    changedSteps,
    next,
    owed: over ? owedBy(deployment, next) : undefined,
    events,
  };
};
