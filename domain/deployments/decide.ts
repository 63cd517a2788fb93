// The engine's decision, pure: given a running deployment, the current command of each step, the targets of the steps
// still waiting on their agent and the time, what one pass does. No ports, no promises: engine.ts reads, calls
// `decide`, and applies what it returns (agents woken and commands stopped, commands enqueued, the deployment written
// conditioned on the revision read, events published, what an end owes settled), in that order.
//
// In order, as a pass does it: collect finished commands (success, retry, or failure), fail steps whose target
// stopped answering and everything at the overall deployment timeout, start the next steps the target mode and
// failure strategy allow, and finish the deployment when nothing is left (or start its rollback).
//
// Each phase is a named function in its own file: collectResults and applyTimeout (decide-results.ts), stepsToStart
// and startSteps (decide-start.ts), endOf and decisionOf (decide-end.ts); they share one pass's state (decide-pass.ts).
//
// A plan made before scripts were pinned takes its scripts from the catalog: `decide` then asks for the ones it needs
// (`read_scripts`) and is called again with them, so a pass reads the catalog only when it starts something.
import type { Command, Target } from '../targets/types.js';
import { endOf, decisionOf } from './decide-end.js';
import { newPass, type Decision, type ScriptsNeeded } from './decide-pass.js';
import { applyTimeout, collectResults } from './decide-results.js';
import { launcher, startSteps, stepsToStart } from './decide-start.js';
import type { Deployment, PlanStep, StepScript } from './types.js';

export {
  commandIdOf,
  elapsed,
  REWAKE_AFTER_MS,
  scriptKey,
  TIMEOUT_EXIT_CODE,
  type AgentSignal,
  type Decision,
  type EngineEvent,
  type ScriptRef,
  type ScriptsNeeded,
} from './decide-pass.js';

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

/** A running step's command still waits on its agent: neither reported nor cancelled. */
const waitsOnAgent = (command: Command | undefined): command is Command =>
  command !== undefined &&
  command.status !== 'cancelled' &&
  !(command.status === 'completed' && command.result !== null);

/** The targets `decide` needs (read in one batch): those of running steps whose command still waits on its agent. */
export const targetsToRead = (deployment: Pick<Deployment, 'plan'>, commands: ReadonlyMap<string, Command>): string[] =>
  deployment.plan.steps.filter((s) => s.state === 'running' && waitsOnAgent(commands.get(s.id))).map((s) => s.targetId);

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
  const pass = newPass(deployment, now);
  const catalog = options.catalog ?? new Map<string, StepScript | undefined>();
  const launching = launcher(pass, catalog);
  collectResults(pass, commands, targets, options.check);
  const timeout = applyTimeout(pass, commands, options.maxDeploymentSeconds);
  const needed = startSteps(pass, stepsToStart(pass, timeout.timedOut), catalog, launching);
  if (needed !== undefined) return needed;
  const end = endOf(pass, timeout, catalog, launching);
  return 'kind' in end ? end : decisionOf(pass, end);
};
