// The execution engine: one `advance` looks at a running deployment and its commands and moves it on. It runs on
// every wake-up (a deployment started, an agent completed a command, a periodic check while anything runs) and is
// idempotent: commands have deterministic ids (step id + attempt, created only if absent) and the deployment is
// written conditioned on the revision read, so a duplicate or concurrent wake-up changes nothing twice.
//
// Per wake-up: collect finished commands (success, retry, or failure), fail steps whose target stopped answering
// (no heartbeat for 60 s) and everything at the overall deployment timeout, start the next steps the target mode and
// failure strategy allow, and finish the deployment when nothing is left (its instance freed in the same write).
//
// Nothing holds an instance forever: without a deployment_timeout_seconds the ceiling DEPLOYMENT_MAX_SECONDS applies,
// and a deployment whose passes keep failing the same way (ENGINE_MAX_FAILED_PASSES in a row) is failed, its
// instance freed. What an end owes (cancel notices, the dispatcher's wake-up) goes through the outbox (outbox.ts).
import type { SecretCipher } from '../identity/ports.js';
import type { Clock } from '../shared/ports.js';
import { cancelCommand } from '../targets/commands.js';
import type { CommandRepository, TargetRepository } from '../targets/ports.js';
import { agentGone } from '../targets/targets.js';
import type { Command } from '../targets/types.js';
import type { DeploymentEventStore } from './events.js';
import { owedBy, settleOutbox } from './outbox.js';
import type { DeploymentRepository, DispatchQueue, Orchestration } from './ports.js';
import { TERMINAL_STATES, type Deployment, type DeploymentState, type PlanStep, type StepScript } from './types.js';

/** While anything runs, the engine looks again this often (offline targets, the overall timeout). */
export const CHECK_EVERY_SECONDS = 10;
export const TIMEOUT_EXIT_CODE = 124;
/** A second periodic check chain of one deployment (a re-arm by the sweep while the first was only late) ends itself. */
export const CHECK_MIN_GAP_MS = CHECK_EVERY_SECONDS * 800;
/** The ceiling of a deployment without deployment_timeout_seconds: the largest timeout one may ask for (7 days). */
export const DEPLOYMENT_MAX_SECONDS = 604_800;
export const ENGINE_MAX_FAILED_PASSES = 5;

export interface EngineLimits {
  /** Passes failing the same way in a row before the deployment is failed (ENGINE_MAX_FAILED_PASSES). */
  readonly maxFailedPasses: number;
  /** The ceiling applied when deployment_timeout_seconds is 0 (DEPLOYMENT_MAX_SECONDS). */
  readonly maxDeploymentSeconds: number;
}

export interface EngineQueue {
  /**
   * Asks for an `advance` of the deployment, now or after `delaySeconds`. `check` marks the one periodic wake-up
   * chain of a deployment (started with it): only a check re-arms itself, so event wake-ups never multiply timers.
   */
  wake(deploymentId: string, options?: { readonly delaySeconds?: number; readonly check?: boolean }): Promise<void>;
}

/**
 * The script a step runs: the one pinned in the plan when it was made; the catalog's only for a deployment planned
 * before scripts were pinned.
 */
const scriptOf = async (
  deps: Pick<EngineDeps, 'scripts'>,
  deployment: Pick<Deployment, 'plan'>,
  step: PlanStep,
): Promise<StepScript | undefined> => {
  const pinned = deployment.plan.scripts;
  if (pinned !== undefined)
    return Object.hasOwn(pinned, step.actionVersionId) ? pinned[step.actionVersionId] : undefined;
  return deps.scripts.find(step.actionId, step.actionVersion);
};

export interface StepScripts {
  /** The script of an action version, or undefined when it no longer exists. */
  find(actionId: string, version: string): Promise<StepScript | undefined>;
}

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

export interface EngineDeps {
  readonly deployments: DeploymentRepository;
  readonly orchestration: Orchestration;
  readonly dispatch: DispatchQueue;
  readonly commands: CommandRepository;
  readonly targets: Pick<TargetRepository, 'getMany'>;
  readonly scripts: StepScripts;
  readonly cipher: SecretCipher;
  readonly engine: EngineQueue;
  readonly clock: Clock;
  readonly publish?: (deploymentId: string, events: readonly EngineEvent[]) => Promise<void>;
  /** The event store, for the final state_change an outbox entry may still owe. */
  readonly events?: Pick<DeploymentEventStore, 'last' | 'append'>;
  /** Defaults: ENGINE_MAX_FAILED_PASSES, DEPLOYMENT_MAX_SECONDS. */
  readonly limits?: EngineLimits;
  /** Failures that say nothing about the deployment (throttling, a network error): retried, never counted. */
  readonly isTransient?: (error: unknown) => boolean;
  /**
   * Pushes another wake-up to a target's agent (the agent channel). A periodic check calls it for a command still
   * waiting in the inbox REWAKE_AFTER_MS after it was queued: the first push was lost (a socket reconnecting).
   */
  readonly wakeAgent?: (targetId: string) => Promise<unknown>;
}

/** A command still queued this long after its creation gets its target's agent woken again (each periodic check). */
export const REWAKE_AFTER_MS = 5_000;

export const commandIdOf = (stepId: string, attempt: number): string => `${stepId}-a${attempt}`;

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

const latestCommands = (commands: readonly Command[]): Map<string, Command> => {
  const latest = new Map<string, Command>();
  for (const c of commands) if ((latest.get(c.stepId)?.attempt ?? 0) < c.attempt) latest.set(c.stepId, c);
  return latest;
};

const elapsed = (from: string | null, to: Date): number | null =>
  from === null ? null : to.getTime() - Date.parse(from);

/** The error_message of a deployment the engine gave up on: generic on purpose (the details are in the logs). */
export const gaveUpMessage = (passes: number): string =>
  `The execution engine failed ${passes} times in a row: the deployment could not be moved on because of an ` +
  "internal error (details are in the service's logs). Its running steps were stopped and its instance freed.";

/** What a failed pass counts as: the same kind of error again is "failing the same way". */
export const failureKind = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/**
 * Advances the deployment. A pass that throws is counted; at `maxFailedPasses` failures of the same kind in a row
 * the deployment is failed (instance freed, commands stopped, dispatcher woken) and the call returns normally, so
 * the message that carried it is consumed. Below that, or for a transient error, it throws (the message is retried).
 */
export const advance = async (
  deps: EngineDeps,
  deploymentId: string,
  options: { readonly check?: boolean } = {},
): Promise<void> => {
  try {
    await advancePasses(deps, deploymentId, options);
  } catch (error) {
    if (deps.isTransient?.(error) === true) throw error;
    const passes = await deps.deployments.recordFailedPass(deploymentId, failureKind(error));
    if (passes === undefined || passes < (deps.limits?.maxFailedPasses ?? ENGINE_MAX_FAILED_PASSES)) throw error;
    await giveUp(deps, deploymentId, passes);
  }
};

const advancePasses = async (
  deps: EngineDeps,
  deploymentId: string,
  options: { readonly check?: boolean },
): Promise<void> => {
  let deployment: Deployment | undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    deployment = await deps.deployments.get(deploymentId);
    if (deployment === undefined) return;
    if (TERMINAL_STATES.has(deployment.state)) {
      // A retried pass re-does what the end still owes, if a process died before doing it.
      const owed =
        deployment.completedAt === null
          ? undefined
          : await deps.orchestration.outboxEntry(deployment.id, deployment.completedAt);
      if (owed !== undefined) await settleOutbox(deps, owed);
      return;
    }
    const over = await advanceOnce(deps, deployment);
    if (over === undefined) continue;
    if (!over && deployment.passFailures !== undefined) await deps.deployments.clearFailedPasses(deployment);
    if (!over && options.check === true) await rearm(deps, deployment);
    return;
  }
  // Every attempt lost a race: other passes are moving the deployment on. A check keeps its chain alive all the same.
  if (options.check === true && deployment !== undefined) await rearm(deps, deployment);
};

/** The next periodic check, unless another chain of checks ran within CHECK_MIN_GAP_MS (then this one ends). */
const rearm = async (deps: EngineDeps, deployment: Deployment): Promise<void> => {
  if (
    deployment.instanceId !== null &&
    !(await deps.orchestration.recordCheck(deployment.instanceId, deployment.id, deps.clock.now(), CHECK_MIN_GAP_MS))
  )
    return;
  await deps.engine.wake(deployment.id, { delaySeconds: CHECK_EVERY_SECONDS, check: true });
};

/**
 * Fails a deployment the engine cannot move on: running steps failed, waiting ones skipped (when its plan can be
 * read at all), the instance freed, and through the outbox its commands stopped and the dispatcher woken.
 */
const giveUp = async (deps: EngineDeps, deploymentId: string, passes: number): Promise<void> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const deployment = await deps.deployments.get(deploymentId);
    if (deployment === undefined || TERMINAL_STATES.has(deployment.state)) return;
    const now = deps.clock.now();
    const at = now.toISOString();
    let plan = deployment.plan;
    try {
      plan = {
        ...deployment.plan,
        steps: deployment.plan.steps.map((s): PlanStep =>
          s.state === 'running'
            ? {
                ...s,
                state: 'failed',
                completedAt: at,
                errorMessage: 'Stopped: the execution engine gave up on the deployment.',
              }
            : s.state === 'pending'
              ? { ...s, state: 'skipped' }
              : s,
        ),
      };
    } catch {
      // The stored plan cannot be read (that may be why every pass failed): it is kept as it is.
    }
    const next: Deployment = {
      ...deployment,
      plan,
      state: 'failed',
      completedAt: at,
      durationMs: elapsed(deployment.startedAt, now),
      errorMessage: gaveUpMessage(passes),
      revision: deployment.revision + 1,
      passFailures: undefined,
    };
    const owed = owedBy(deployment, next);
    if (await deps.orchestration.finish(deployment, next, owed)) {
      await settleOutbox(deps, owed);
      return;
    }
  }
  throw new Error(`deployment ${deploymentId} kept changing while the engine gave up on it`);
};

/** One pass: whether the deployment is over now; undefined when it changed meanwhile (the caller reads it again). */
const advanceOnce = async (deps: EngineDeps, deployment: Deployment): Promise<boolean | undefined> => {
  const now = deps.clock.now();
  const at = now.toISOString();
  const config = deployment.config;
  const commands = latestCommands(await deps.commands.listByDeployment(deployment.id));
  const steps = new Map(deployment.plan.steps.map((s) => [s.id, s] as const));
  const changed = new Set<string>();
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

  // 1. Results of running steps; targets that stopped answering (their targets read in one batch, not one by one).
  const running = [...steps.values()].filter((s) => s.state === 'running');
  const waitingOn = running.filter((s) => {
    const command = commands.get(s.id);
    return (
      command !== undefined &&
      command.status !== 'cancelled' &&
      !(command.status === 'completed' && command.result !== null)
    );
  });
  const targets = new Map(
    waitingOn.length === 0
      ? []
      : (await deps.targets.getMany(waitingOn.map((s) => s.targetId))).map((t) => [t.id, t] as const),
  );
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
        gone === undefined &&
        command.status === 'queued' &&
        now.getTime() - Date.parse(command.createdAt) >= REWAKE_AFTER_MS
      )
        await deps.wakeAgent?.(step.targetId);
      if (target === undefined || gone !== undefined) {
        await cancelCommand(deps, command.id);
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
  const limitSeconds = ceiling
    ? (deps.limits?.maxDeploymentSeconds ?? DEPLOYMENT_MAX_SECONDS)
    : config.deploymentTimeoutSeconds;
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
        if (command !== undefined) await cancelCommand(deps, command.id);
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
  const launch = async (step: PlanStep, attempt: number): Promise<void> => {
    const found = await scriptOf(deps, deployment, step);
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
    await deps.commands.enqueue({
      id: commandIdOf(step.id, attempt),
      targetId: step.targetId,
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
  // Side by side: a fan-out to many targets stores (and pushes) its commands at once, not one after another.
  const retries = all().filter((s) => s.state === 'running' && changed.has(s.id));
  for (const step of toStart) set({ ...step, state: 'running', startedAt: at });
  await Promise.all([
    ...retries.map((step) => launch(step, step.retryCount + 1)),
    ...toStart.map((step) => launch(steps.get(step.id) as PlanStep, 1)),
  ]);

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
      ? `${deployment.errorMessage ?? 'The deployment failed'}; during the rollback: ${timeoutMessage}`
      : rollbackFailed
        ? `${deployment.errorMessage ?? 'The deployment failed'}; the rollback failed too.`
        : deployment.errorMessage;
  } else if (over && nextState === 'failed' && !timedOut && config.rollbackStrategy !== 'none') {
    const rollbackSteps = await rollbackPlan(deps, deployment, final, config.rollbackStrategy);
    if (rollbackSteps.length > 0) {
      for (const r of rollbackSteps) set(r);
      errorMessage ??= `${counts.failedSteps} step(s) failed.`;
      const first = rollbackSteps[0] as PlanStep;
      set({ ...first, state: 'running', startedAt: at });
      await launch(steps.get(first.id) as PlanStep, 1);
      final = all();
      over = false;
      nextState = 'rolling_back';
    }
  }
  const progress = final.length === 0 ? 1 : final.filter((s) => FINISHED.has(s.state)).length / final.length;
  if (changed.size === 0 && nextState === deployment.state) return false;
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
  const owed = over ? owedBy(deployment, next) : undefined;
  const written =
    owed !== undefined
      ? await deps.orchestration.finish(deployment, next, owed)
      : await deps.deployments.update(deployment, next);
  if (!written) return undefined;
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
    ...[...changed].map((id) => ({ type: 'step_update' as const, step: steps.get(id) as PlanStep })),
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
  await deps.publish?.(deployment.id, events);
  if (owed !== undefined) await settleOutbox(deps, owed);
  return over;
};

/**
 * The rollback steps of a failed deployment: for every executed step (completed or failed) whose action version has
 * a rollback script, on the failed targets only or on every target, in reverse order of execution.
 */
const rollbackPlan = async (
  deps: Pick<EngineDeps, 'scripts'>,
  deployment: Pick<Deployment, 'plan'>,
  steps: readonly PlanStep[],
  strategy: 'failed_target_only' | 'all_executed',
): Promise<PlanStep[]> => {
  const failedTargets = new Set(steps.filter((s) => s.state === 'failed').map((s) => s.targetId));
  const position = new Map(steps.map((s, i) => [s.id, i] as const));
  const executed = steps
    .filter(
      (s) => s.rollbackOf === undefined && (s.state === 'completed' || s.state === 'failed') && s.startedAt !== null,
    )
    .filter((s) => strategy === 'all_executed' || failedTargets.has(s.targetId))
    // Newest first; steps started in the same instant, the later in plan order first.
    .sort(
      (a, b) =>
        (b.startedAt as string).localeCompare(a.startedAt as string) ||
        (position.get(b.id) ?? 0) - (position.get(a.id) ?? 0),
    );
  const plan: PlanStep[] = [];
  for (const step of executed) {
    const script = await scriptOf(deps, deployment, step);
    if (script?.rollbackScript === null || script === undefined) continue;
    plan.push({
      ...step,
      id: `${step.id}-rollback`,
      rollbackOf: step.id,
      state: 'pending',
      startedAt: null,
      completedAt: null,
      exitCode: null,
      errorMessage: null,
      retryCount: 0,
      durationMs: null,
    });
  }
  return plan;
};
