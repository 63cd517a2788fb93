// The execution engine: one `advance` looks at a running deployment and its commands and moves it on. It runs on
// every wake-up (a deployment started, an agent completed a command, a periodic check while anything runs) and is
// idempotent: commands have deterministic ids (step id + attempt, created only if absent) and the deployment is
// written conditioned on the revision read, so a duplicate or concurrent wake-up changes nothing twice.
//
// Per wake-up: collect finished commands (success, retry, or failure), fail steps whose target stopped answering
// (no heartbeat for 60 s) and everything at the overall deployment timeout, start the next steps the target mode and
// failure strategy allow, and finish the deployment when nothing is left (its instance freed in the same write).
// That decision is pure (decide.ts); a pass here reads, calls `decide`, and applies what it returns.
//
// Nothing holds an instance forever: without a deployment_timeout_seconds the ceiling DEPLOYMENT_MAX_SECONDS applies,
// and a deployment whose passes keep failing the same way (ENGINE_MAX_FAILED_PASSES in a row) is failed, its
// instance freed. What an end owes (cancel notices, the dispatcher's wake-up) goes through the outbox (outbox.ts).
import type { SecretCipher } from '../identity/ports.js';
import type { Clock, ServiceMetrics } from '../shared/ports.js';
import { eachLimited } from '../shared/concurrency.js';
import { cancelCommand } from '../targets/commands.js';
import type { AgentDispatch, CommandRepository, TargetRepository } from '../targets/ports.js';
import type { Command, Target } from '../targets/types.js';
import { decide, elapsed, currentCommands, scriptKey, targetsToRead, type Decision } from './decide.js';
import type { KeyedEventAppender } from './events.js';
import { deploymentData, owedBy, settleOutbox, type DeploymentWebhooks } from './outbox.js';
import { publishPass } from './publish-pass.js';
import type { DeploymentRepository, DispatchQueue, Orchestration } from './ports.js';
import { TERMINAL_STATES, type Deployment, type PlanStep, type StepScript } from './types.js';

export { commandIdOf, REWAKE_AFTER_MS, TIMEOUT_EXIT_CODE, type EngineEvent } from './decide.js';

/** While anything runs, the engine looks again this often (offline targets, the overall timeout). */
export const CHECK_EVERY_SECONDS = 10;
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

/** How a wake-up is asked for (EngineQueue.wake). */
export interface EngineWake {
  readonly delaySeconds?: number;
  readonly check?: boolean;
  /**
   * The command whose completion this wake-up reports. The pass lists the deployment's commands from an index that
   * DynamoDB updates after the write (eventually consistent): a command it lists as not completed yet is read again
   * from the table, so the completion is acted on in this pass, not at the next periodic check (10 s later).
   */
  readonly commandId?: string;
}

export interface EngineQueue {
  /**
   * Asks for an `advance` of the deployment, now or after `delaySeconds`. `check` marks the one periodic wake-up
   * chain of a deployment (started with it): only a check re-arms itself, so event wake-ups never multiply timers.
   */
  wake(deploymentId: string, options?: EngineWake): Promise<void>;
}

export interface StepScripts {
  /** The script of an action version, or undefined when it no longer exists. */
  find(actionId: string, version: string): Promise<StepScript | undefined>;
}

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
  /** Outgoing webhooks: created and started on the first pass; the terminal ones through the outbox. */
  readonly webhooks?: DeploymentWebhooks;
  /** Business metrics: each deployment's final state, once (the write that made it final succeeded). */
  readonly metrics?: ServiceMetrics;
  /**
   * The event store: each pass's events once its write succeeded (publish-pass.ts), and the final state_change an
   * outbox entry may still owe. Absent: nothing is published.
   */
  readonly events?: KeyedEventAppender;
  /** Defaults: ENGINE_MAX_FAILED_PASSES, DEPLOYMENT_MAX_SECONDS. */
  readonly limits?: EngineLimits;
  /** Failures that say nothing about the deployment (throttling, a network error): retried, never counted. */
  readonly isTransient?: (error: unknown) => boolean;
  /**
   * How agents are reached (domain/targets/agent-dispatch.ts): a pass's launches are handed to it (pushed over the
   * socket when the target's agent takes pushes, else queued with a wake-up); a periodic check wakes again the agent of
   * a command still waiting in its inbox, and pushes again a pushed command not acknowledged, REWAKE_AFTER_MS after.
   */
  readonly agents: AgentDispatch;
}

/** The error_message of a deployment the engine gave up on: generic on purpose (the details are in the logs). */
export const gaveUpMessage = (passes: number): string =>
  `The execution engine failed ${passes} times in a row: the deployment could not be moved on because of an ` +
  "internal error (details are in the service's logs). Its running steps were stopped and its instance freed.";

/** What a failed pass counts as: the same kind of error again is "failing the same way". */
export const failureKind = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

export interface AdvanceOptions {
  /** A periodic check (its chain re-arms itself). */
  readonly check?: boolean;
  /** Commands reported completed since (the wake-ups' commandId): read from the table when the index lags. */
  readonly completed?: readonly string[];
}

/**
 * Advances the deployment. A pass that throws is counted; at `maxFailedPasses` failures of the same kind in a row
 * the deployment is failed (instance freed, commands stopped, dispatcher woken) and the call returns normally, so
 * the message that carried it is consumed. Below that, or for a transient error, it throws (the message is retried).
 */
export const advance = async (deps: EngineDeps, deploymentId: string, options: AdvanceOptions = {}): Promise<void> => {
  try {
    await advancePasses(deps, deploymentId, options);
  } catch (error) {
    if (deps.isTransient?.(error) === true) throw error;
    const passes = await deps.deployments.recordFailedPass(deploymentId, failureKind(error));
    if (passes === undefined || passes < (deps.limits?.maxFailedPasses ?? ENGINE_MAX_FAILED_PASSES)) throw error;
    await giveUp(deps, deploymentId, passes);
  }
};

const advancePasses = async (deps: EngineDeps, deploymentId: string, options: AdvanceOptions): Promise<void> => {
  let deployment: Deployment | undefined;
  // What passes that lost their write had launched: if the deployment ended meanwhile (a cancel), nobody else knows.
  const launchedByLost: Command[] = [];
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
      await stopOrphans(deps, launchedByLost);
      return;
    }
    const over = await advanceOnce(deps, deployment, options.check === true, options.completed ?? []);
    if (typeof over === 'object') {
      launchedByLost.push(...over.launched);
      continue;
    }
    if (!over && deployment.passFailures !== undefined) await deps.deployments.clearFailedPasses(deployment);
    if (!over && options.check === true) await rearm(deps, deployment);
    return;
  }
  // Every attempt lost a race: other passes are moving the deployment on. A check keeps its chain alive all the same.
  if (options.check === true && deployment !== undefined) await rearm(deps, deployment);
};

/**
 * Commands a pass launched and then lost its write to an end (a cancel read the deployment before they existed, so
 * its own stop did not find them): stopped, as the end's would have. One already done is left as it is.
 */
const stopOrphans = async (deps: EngineDeps, launched: readonly Command[]): Promise<void> => {
  await eachLimited(launched, ORPHAN_STOPS, (command) => cancelCommand(deps, command.id));
};
const ORPHAN_STOPS = 16;

/** A pass whose conditional write lost to another's: what it had launched before. */
interface LostPass {
  readonly launched: readonly Command[];
}

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
      deps.metrics?.deploymentFinished(next.state);
      await settleOutbox(deps, owed);
      return;
    }
  }
  throw new Error(`deployment ${deploymentId} kept changing while the engine gave up on it`);
};

/**
 * The listed commands, with those reported completed (`completed`) but listed otherwise (or not at all) read again
 * from the table: the list comes from an eventually consistent index, and a wake-up may reach the pass before the
 * index shows the completion that sent it. Nothing is read when the list already shows them completed (always so on
 * DynamoDB Local, whose indexes are updated with the write).
 */
const withCompleted = async (
  deps: EngineDeps,
  deploymentId: string,
  listed: readonly Command[],
  completed: readonly string[],
): Promise<readonly Command[]> => {
  if (completed.length === 0) return listed;
  const byId = new Map(listed.map((c) => [c.id, c] as const));
  const lagging = [...new Set(completed)].filter((id) => byId.get(id)?.status !== 'completed');
  if (lagging.length === 0) return listed;
  const fresh = await Promise.all(lagging.map((id) => deps.commands.get(id)));
  for (const command of fresh)
    if (command !== undefined && command.deploymentId === deploymentId) byId.set(command.id, command);
  return [...byId.values()];
};

/**
 * One pass: read, decide (decide.ts), apply. Whether the deployment is over now; a LostPass when it changed meanwhile
 * (the caller reads it again).
 */
const advanceOnce = async (
  deps: EngineDeps,
  deployment: Deployment,
  check: boolean,
  completed: readonly string[],
): Promise<boolean | LostPass> => {
  const now = deps.clock.now();
  const listed = await deps.commands.listByDeployment(deployment.id);
  const commands = currentCommands(deployment.plan.steps, await withCompleted(deps, deployment.id, listed, completed));
  // The targets of the steps waiting on their agent, read in one batch, not one by one.
  const waitingOn = targetsToRead(deployment, commands);
  const targets = new Map(
    waitingOn.length === 0 ? [] : (await deps.targets.getMany(waitingOn)).map((t) => [t.id, t] as const),
  );
  const maxDeploymentSeconds = deps.limits?.maxDeploymentSeconds ?? DEPLOYMENT_MAX_SECONDS;
  // A plan without pinned scripts: the catalog is read for what the decision starts, then it is taken again (each
  // round asks only for versions not read yet, so this ends).
  const catalog = new Map<string, StepScript | undefined>();
  for (;;) {
    const decision = decide(deployment, commands, targets, now, { maxDeploymentSeconds, catalog, check });
    if (decision.kind === 'decision') return apply(deps, deployment, decision, targets, commands);
    const found = await Promise.all(decision.refs.map((ref) => deps.scripts.find(ref.actionId, ref.version)));
    decision.refs.forEach((ref, i) => catalog.set(scriptKey(ref), found[i]));
  }
};

const announce = async (webhooks: DeploymentWebhooks | undefined, first: Deployment, next: Deployment) => {
  if (webhooks === undefined) return;
  for (const [type, record, at] of [
    ['deployment.created', first, first.createdAt],
    ['deployment.started', next, next.startedAt ?? first.createdAt],
  ] as const)
    await webhooks.emitter.emit({
      type,
      subject: [first.id],
      tenantId: first.tenantId,
      timestamp: at,
      since: first.createdAt,
      data: () => deploymentData(record),
    });
};

/**
 * Does what a decision says, in this order: agents woken and commands stopped; commands enqueued (side by side: a
 * fan-out stores and pushes its commands at once); the deployment written conditioned on the revision read (through
 * the orchestration with its outbox entry when it ends); then its events published and the outbox settled.
 */
const apply = async (
  deps: EngineDeps,
  deployment: Deployment,
  decision: Decision,
  targets: ReadonlyMap<string, Target>,
  commands: ReadonlyMap<string, Command>,
): Promise<boolean | LostPass> => {
  // Wake-ups and second pushes are best effort: the agent drains its inbox on reconnect, and the next check pushes again.
  for (const signal of decision.signals)
    if (signal.kind === 'wake_agent') await deps.agents.wake(signal.targetId).catch(() => false);
    else if (signal.kind === 'cancel_command') await cancelCommand(deps, signal.commandId);
  // Second pushes side by side (a fan-out's unacknowledged commands at one check).
  await Promise.all(
    decision.signals.map((signal) =>
      signal.kind === 'push_again'
        ? deps.agents.pushAgain(signal.command, targets.get(signal.command.targetId)).catch(() => undefined)
        : undefined,
    ),
  );
  if (decision.launches.length > 0) await deps.agents.launch(decision.launches);
  const { next, owed } = decision;
  if (next === undefined) return false;
  // The first pass announces the deployment, before its write: a pass that dies after the write is not retried
  // into this branch again, while one that dies before it emits again (the same ids: no second delivery).
  if (deployment.revision === 1) await announce(deps.webhooks, deployment, next);
  const written =
    owed !== undefined
      ? await deps.orchestration.finish(deployment, next, owed)
      : await deps.deployments.update(deployment, next);
  if (!written) return { launched: decision.launches };
  if (owed !== undefined) deps.metrics?.deploymentFinished(next.state);
  if (deps.events !== undefined)
    await publishPass({ ...deps, events: deps.events }, deployment.id, decision.events, next.revision, commands);
  if (owed !== undefined) await settleOutbox(deps, owed);
  return owed !== undefined;
};
