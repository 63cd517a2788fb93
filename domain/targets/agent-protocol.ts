// The agent's side of the service (decisions.md section 6). Agents authenticate with their agent token only, and
// only ever see or report commands of their own target: anything else answers 404, as if it did not exist.
import { AGENT_INSTANCE_HEADER } from '../../protocol/headers.js';
import { SIGN_OF_LIFE_REFRESH_MS, type CompleteRequest as CompleteCommand } from '../../protocol/messages.js';
import { outputBytes } from '../../protocol/output-limits.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { InvalidTokenError } from '../identity/errors.js';
import { bearerToken } from '../identity/authenticate.js';
import { openVariable } from '../shared/variable-secrets.js';
import type { SecretCipher } from '../identity/ports.js';
import type { TargetsDeps } from './deps.js';
import { checkAgentVersion } from './compatibility.js';
import { INLINE_OUTPUT_BYTES, outputTail } from './commands.js';
import { AGENT_TOKEN_PREFIX } from './enrollment.js';
import type { AgentCaller, Command, CommandResult, OutputChunk } from './types.js';

export const MAX_POLL_WAIT_SECONDS = 20;

/** An installation id as the agent sends it; anything else is ignored (the agent is then treated as an older one). */
export const agentInstanceOf = (
  headers: Readonly<Record<string, string | undefined>> | undefined,
): string | undefined => {
  const value = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === AGENT_INSTANCE_HEADER)?.[1];
  return typeof value === 'string' && /^[A-Za-z0-9-]{16,64}$/.test(value) ? value : undefined;
};

export const authenticateAgent = async (
  deps: Pick<TargetsDeps, 'targets' | 'random'>,
  authorization: string | undefined,
): Promise<AgentCaller> => {
  const token = bearerToken(authorization);
  if (!token.startsWith(AGENT_TOKEN_PREFIX))
    throw new InvalidTokenError('Agent endpoints accept only agent tokens (dpa_...), not user credentials.');
  // One read: the token's lookup item names the target and its tenant (it is deleted with the target).
  const agent = await deps.targets.agentOfToken(deps.random.hash(token));
  if (agent === undefined)
    throw new InvalidTokenError('The agent token is not valid (was the target deleted?); enroll the agent again.');
  return {
    kind: 'agent',
    targetId: agent.targetId,
    tenantId: agent.tenantId,
    ...(agent.heardAt === undefined ? {} : { heardAt: agent.heardAt }),
  };
};

/**
 * Refuses (409 AGENT_VERSION_INCOMPATIBLE) an agent whose claimed version is of another major version than the
 * server's (a call without one counts as 1.0.0). The version it claimed is stored on its target first, so the target
 * list shows what runs there and that it is refused (the agent itself stops on this answer).
 */
export const admitAgentVersion = async (
  deps: Pick<TargetsDeps, 'targets'>,
  serverVersion: string,
  agent: AgentCaller,
  claimed: string | undefined,
): Promise<AgentCaller> => {
  try {
    checkAgentVersion(claimed, serverVersion);
  } catch (error) {
    if (claimed !== undefined) await deps.targets.recordAgentVersion(agent.targetId, claimed);
    throw error;
  }
  return claimed === undefined ? agent : { ...agent, agentVersion: claimed };
};

/** Every agent call: the agent token (401), then the version the agent claims (`x-deployer-agent-version`, 409). */
export const admitAgent = async (
  deps: Pick<TargetsDeps, 'targets' | 'random' | 'settings'>,
  authorization: string | undefined,
  claimedVersion: string | undefined,
): Promise<AgentCaller> =>
  admitAgentVersion(deps, deps.settings.serverVersion, await authenticateAgent(deps, authorization), claimedVersion);

/** A sign of life younger than this is not written again (the dead-agent rule allows 60 s). */
export { SIGN_OF_LIFE_REFRESH_MS };

/**
 * Polls and completions prove the agent alive as much as a heartbeat does (on a loaded server a late heartbeat must
 * not make a working agent look dead), but a burst of them writes the target once per SIGN_OF_LIFE_REFRESH_MS: the
 * write is conditioned on the stored heartbeat being older (authentication does not read the target any more).
 */
const signOfLife = async (deps: Pick<TargetsDeps, 'targets' | 'clock'>, agent: AgentCaller): Promise<void> => {
  const now = deps.clock.now();
  const heard = typeof agent.heardAt === 'string' ? Date.parse(agent.heardAt) : NaN;
  if (now.getTime() - heard < SIGN_OF_LIFE_REFRESH_MS) return;
  await deps.targets.recordSignOfLife(agent.targetId, now, new Date(now.getTime() - SIGN_OF_LIFE_REFRESH_MS));
};

/**
 * A heartbeat; with `stopping`, the agent's goodbye as it stops cleanly (after its commands ended and were reported):
 * its target is offline at once instead of online for a minute and stale for five, and commands given to it meanwhile
 * fail at the engine's next look saying the agent stopped.
 */
export const heartbeat = async (
  deps: Pick<TargetsDeps, 'targets' | 'clock'>,
  agent: AgentCaller,
  options: { readonly stopping?: boolean | undefined } = {},
) => {
  const now = deps.clock.now();
  if (options.stopping === true) await deps.targets.recordSignOff(agent.targetId, now);
  else await deps.targets.recordHeartbeat(agent.targetId, now, agent.agentVersion);
  return { server_time: now.toISOString() };
};

/** A command's variables as the agent gets them: sealed secret values opened (own properties only). */
const openedVariables = (cipher: SecretCipher, command: Command): Record<string, string> => {
  const secret = new Set(command.secretVariables);
  return Object.fromEntries(
    Object.entries(command.variables).map(([name, value]) => [
      name,
      command.sealedSecrets === true && secret.has(name) ? openVariable(cipher, value, true) : value,
    ]),
  );
};

/** What an agent receives for one command: everything needed to run one step. Built only for the claiming agent. */
export const commandForAgent = (cipher: SecretCipher, command: Command) => ({
  id: command.id,
  deployment_id: command.deploymentId,
  step_id: command.stepId,
  attempt: command.attempt,
  action: { ...command.action },
  script: command.script,
  interpreter: command.interpreter,
  variables: openedVariables(cipher, command),
  secret_variables: [...command.secretVariables],
  timeout_seconds: command.timeoutSeconds,
  created_at: command.createdAt,
});

/**
 * The long poll: answers as soon as the target's inbox has commands (up to `max`) or cancel notices, else after
 * `wait` seconds with nothing. Ends early, empty-handed, when `signal` aborts (the platform's time is running out).
 */
export const pollCommands = async (
  deps: TargetsDeps,
  agent: AgentCaller,
  request: { wait: number; max: number; instance?: string | undefined },
  signal?: AbortSignal,
) => {
  await signOfLife(deps, agent);
  const deadline = deps.clock.now().getTime() + Math.min(request.wait, MAX_POLL_WAIT_SECONDS) * 1000;
  for (;;) {
    const { commands, cancel } = await deps.commands.claimInbox(
      agent.targetId,
      request.max,
      deps.clock.now(),
      request.instance,
    );
    if (commands.length > 0 || cancel.length > 0)
      return { commands: commands.map((command) => commandForAgent(deps.cipher, command)), cancel: [...cancel] };
    const left = deadline - deps.clock.now().getTime();
    if (left <= 0 || signal?.aborted === true) return { commands: [], cancel: [] };
    await deps.sleeper.sleep(Math.min(deps.settings.pollIntervalMs, left), signal);
  }
};

const ownCommand = async (
  deps: Pick<TargetsDeps, 'commands'>,
  agent: AgentCaller,
  commandId: string,
): Promise<Command> => {
  const command = await deps.commands.get(commandId);
  if (command === undefined || command.targetId !== agent.targetId) throw new NotFoundError('Command', commandId);
  return command;
};

/**
 * Appends output. A retried chunk (a seq already stored) is not stored again, so agents retry freely; its log
 * lines are handed on again all the same, and the listener adds only those a crash lost (log events are kept once
 * per (command, seq)). Output for a command that already completed is accepted only as such a retry. The answer
 * tells the agent when to stop the command.
 */
export const appendOutput = async (
  deps: TargetsDeps,
  agent: AgentCaller,
  commandId: string,
  chunks: readonly OutputChunk[],
) => appendTo(deps, await ownCommand(deps, agent, commandId), chunks);

const appendTo = async (deps: TargetsDeps, command: Command, chunks: readonly OutputChunk[], completing = false) => {
  if (command.status === 'queued') throw new ConflictError('The command has not been delivered to this agent yet.');
  if (command.status !== 'delivered' && chunks.some((c) => c.seq > command.outputSeq)) {
    throw new ConflictError(`The command is ${command.status}; it takes no more output.`, { status: command.status });
  }
  // Output about a pushed command acknowledges the push; a completion does so, and raises outputSeq, in its own write.
  const acknowledgePush = command.pushedTo !== undefined && !completing;
  const store = async () => {
    const stored =
      command.status === 'delivered'
        ? await deps.commands.appendOutput(command, chunks, deps.clock.now(), {
            acknowledgePush,
            seqRaisedByCompletion: completing,
          })
        : [];
    if (acknowledgePush && command.status !== 'delivered') await deps.commands.acknowledgePush(command.id);
    return stored;
  };
  // The command's chunks and the deployment's log events (appended, then pushed to viewers) are written side by side:
  // both are kept once per seq, so a request that fails halfway is retried whole by the agent and adds nothing twice,
  // and viewers get the lines without waiting for the chunk writes (issue 36). The answer waits for both.
  const [fresh] = await Promise.all([
    store(),
    deps.listener?.output(
      command,
      [...chunks].sort((a, b) => a.seq - b.seq),
    ),
  ]);
  return {
    accepted: fresh.length,
    cancel_requested: command.cancelRequestedAt !== null || command.status === 'cancelled',
  };
};

/**
 * delivered -> completed, once; a repeat of the same report answers as the first did. Output sent with the report is
 * appended first, exactly as POST .../output would (a retried report's output is not stored twice).
 *
 * The usual case, a short command that posted no output before (a fan-out's `echo`), is one write and no read (issue
 * 37): the completing write itself proves the command is this agent's and still delivered with no output stored
 * (its condition), stores the whole output inline and answers the command; its log lines are appended after it. The
 * sign of life (only for agents that ask for one: `sign_of_life` not false) goes beside the write. A refused write
 * answers the command as it was, and the report goes the general way with it.
 */
export const completeCommand = async (
  deps: TargetsDeps,
  agent: AgentCaller,
  commandId: string,
  report: CompleteCommand,
) => {
  const result = {
    exitCode: report.exit_code,
    startedAt: new Date(report.started_at).toISOString(),
    completedAt: new Date(report.completed_at).toISOString(),
    errorMessage: report.error_message ?? null,
  };
  const output = [...(report.output ?? [])].sort((a, b) => a.seq - b.seq);
  // An agent that keeps its own heartbeat cadence says so (sign_of_life false): nothing is recorded for it here.
  const noSignOfLife = report.sign_of_life === false;
  if (outputBytes(output) > INLINE_OUTPUT_BYTES)
    return completeAfterRead(deps, agent, await ownCommand(deps, agent, commandId), result, output, noSignOfLife);
  const [attempt] = await Promise.all([
    deps.commands.completeAs(agent.targetId, commandId, result, output.at(-1)?.seq, {
      tail: outputTail(output),
      seqWas: -1,
      chunks: output,
      receivedAt: deps.clock.now().toISOString(),
    }),
    noSignOfLife ? undefined : signOfLife(deps, agent),
  ]);
  const command = attempt.command;
  if (command === undefined || command.targetId !== agent.targetId) throw new NotFoundError('Command', commandId);
  if (!attempt.completed) return completeAfterRead(deps, agent, command, result, output, true);
  // A log append that fails fails the request, and the agent's retry (refused above: already completed) appends what
  // is missing on the general way (log lines are kept once per seq).
  if (output.length > 0) await deps.listener?.output(command, output);
  await deps.listener?.completed(command);
  return { id: command.id, status: 'completed' as const };
};

/**
 * The general way: `command` as read (or as a refused completing write found it); `noSignOfLife`: none to record
 * (recorded already, or the agent keeps its own heartbeat cadence).
 */
const completeAfterRead = async (
  deps: TargetsDeps,
  agent: AgentCaller,
  command: Command,
  result: CommandResult,
  output: readonly OutputChunk[],
  noSignOfLife = false,
) => {
  // The output it carried raises outputSeq in the completing write. A completion that carries the whole output (none
  // came before it) stores its tail too, so the engine's pass reads no chunks for the step_update.
  const raise = output.length > 0 && output.at(-1)!.seq > command.outputSeq ? output.at(-1)!.seq : undefined;
  const whole = command.outputSeq === -1 ? { tail: outputTail(output), seqWas: -1 } : undefined;
  // The chunks and log lines, beside the sign of life, then the completing write; if its condition fails (outputSeq
  // already as high, or the command is no longer delivered), the completion alone is tried. (A short command's whole
  // output never comes this way: its completing write was tried first, and was refused only because the command was
  // not delivered or had output already; so its log lines are handed over once, here.)
  await Promise.all([
    output.length > 0 ? appendTo(deps, command, output, true) : undefined,
    noSignOfLife ? undefined : signOfLife(deps, agent),
  ]);
  const completed =
    command.status === 'delivered' &&
    (((raise !== undefined || whole !== undefined) &&
      (await deps.commands.complete(command.id, result, raise, whole))) ||
      (await deps.commands.complete(command.id, result)));
  if (completed) {
    await deps.listener?.completed({ ...command, status: 'completed', result });
    return { id: command.id, status: 'completed' as const };
  }
  // Completed is final: a command already seen completed (a repeat refused by the completing write) is not read again.
  const now = command.status === 'completed' ? command : await deps.commands.get(command.id);
  if (now?.status === 'completed') {
    // A repeat: the first report completed it, but its answer (and maybe the engine's wake-up after it, or its log
    // lines, appended again above) was lost. Waking the engine again costs a message and saves the step waiting for
    // the engine's next periodic look (10 s).
    await deps.listener?.completedAgain?.(now);
    return { id: command.id, status: 'completed' as const };
  }
  throw new ConflictError(`The command is ${now?.status ?? command.status}; it cannot be completed.`, {
    status: now?.status ?? command.status,
  });
};
