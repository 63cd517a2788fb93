// The first two phases of `decide` (decide.ts): what the agents reported and what time did. Running steps take
// their command's result (success, retry, failure), fail when their target stopped answering or was deleted, and
// every running step fails (waiting ones skipped) at the overall deployment timeout.
import { agentGone } from '../targets/status.js';
import type { Command, Target } from '../targets/types.js';
import {
  finishStep,
  REWAKE_AFTER_MS,
  setStep,
  stepsOf,
  TIMEOUT_EXIT_CODE,
  type AgentSignal,
  type Pass,
} from './decide-pass.js';
import type { PlanStep } from './types.js';

/**
 * Phase 1: results of running steps; targets that stopped answering. At a periodic check (`check` not false), an
 * agent that answers is woken again for a command still queued, and a pushed command not acknowledged is pushed again.
 */
export const collectResults = (
  pass: Pass,
  commands: ReadonlyMap<string, Command>,
  targets: ReadonlyMap<string, Target>,
  check: boolean | undefined,
): void => {
  const { maxRetries } = pass.deployment.config;
  for (const step of stepsOf(pass).filter((s) => s.state === 'running')) {
    const command = commands.get(step.id);
    if (command?.status === 'completed' && command.result !== null) {
      const { exitCode, errorMessage: reported } = command.result;
      if (exitCode === 0) finishStep(pass, step, 'completed', 0, null);
      else if (step.retryCount < maxRetries)
        setStep(pass, {
          ...step,
          retryCount: step.retryCount + 1,
          exitCode,
          errorMessage: reported ?? `exit code ${exitCode}`,
        });
      else finishStep(pass, step, 'failed', exitCode, reported ?? `The command exited with code ${exitCode}.`);
    } else if (command?.status === 'cancelled') {
      finishStep(pass, step, 'failed', null, 'The command was cancelled before it started.');
    } else if (command !== undefined) {
      waitingCommand(pass, step, command, targets.get(step.targetId), check);
    }
  }
};

/** A running step whose command still waits on its agent: signalled again at a check, failed when its agent is gone. */
const waitingCommand = (
  pass: Pass,
  step: PlanStep,
  command: Command,
  target: Target | undefined,
  check: boolean | undefined,
): void => {
  const now = pass.now.getTime();
  const gone = target === undefined ? undefined : agentGone(target, command.createdAt, pass.now);
  if (check !== false && gone === undefined) pass.signals.push(...again(command, step.targetId, now));
  if (target !== undefined && gone === undefined) return;
  pass.signals.push({ kind: 'cancel_command', commandId: command.id });
  finishStep(
    pass,
    step,
    'failed',
    null,
    target === undefined
      ? `Target ${step.targetName} was deleted while the step ran.`
      : `Target ${step.targetName} is not answering: ${gone}.`,
  );
};

/** A check's second signal for a command: a wake-up when still queued, a second push when pushed and unacknowledged. */
const again = (command: Command, targetId: string, now: number): AgentSignal[] => {
  if (command.status === 'queued' && now - Date.parse(command.createdAt) >= REWAKE_AFTER_MS)
    return [{ kind: 'wake_agent', targetId }];
  if (
    command.status === 'delivered' &&
    command.pushedTo !== undefined &&
    command.cancelRequestedAt === null &&
    now - Date.parse(command.pushedTo.at) >= REWAKE_AFTER_MS
  )
    return [{ kind: 'push_again', command }];
  return [];
};

/** Whether the deployment ran out of time, and what its error says then. */
export interface Timeout {
  readonly timedOut: boolean;
  readonly message: string;
}

/**
 * Phase 2: the overall timeout, the deployment's own, else the service's ceiling (`maxDeploymentSeconds`). Once
 * reached, running steps fail (their commands stopped) and waiting ones are skipped.
 */
export const applyTimeout = (
  pass: Pass,
  commands: ReadonlyMap<string, Command>,
  maxDeploymentSeconds: number,
): Timeout => {
  const { config, startedAt } = pass.deployment;
  const ceiling = config.deploymentTimeoutSeconds === 0;
  const limitSeconds = ceiling ? maxDeploymentSeconds : config.deploymentTimeoutSeconds;
  const timedOut = startedAt !== null && pass.now.getTime() - Date.parse(startedAt) >= limitSeconds * 1000;
  const message = ceiling
    ? `The deployment reached the service's ceiling of ${limitSeconds} s (DEPLOYMENT_MAX_SECONDS; it set no deployment_timeout_seconds); running commands were stopped.`
    : `The deployment timed out after ${limitSeconds} s; running commands were stopped.`;
  if (!timedOut) return { timedOut, message };
  for (const step of stepsOf(pass)) {
    if (step.state === 'running') {
      const command = commands.get(step.id);
      if (command !== undefined) pass.signals.push({ kind: 'cancel_command', commandId: command.id });
      finishStep(
        pass,
        step,
        'failed',
        TIMEOUT_EXIT_CODE,
        ceiling ? "Stopped: the deployment reached the service's time ceiling." : 'Stopped: the deployment timed out.',
      );
    } else if (step.state === 'pending') setStep(pass, { ...step, state: 'skipped' });
  }
  return { timedOut, message };
};
