// The engine's decision as a table: given a deployment, the latest command of each step, the targets and the time,
// which steps change, which commands are launched or stopped, which events go out and what is written.
import { describe, expect, it } from 'vitest';
import {
  commandIdOf,
  decide,
  currentCommands,
  scriptKey,
  targetsToRead,
  type Decision,
  type ScriptsNeeded,
} from '../../../../domain/deployments/decide.js';
import type {
  Deployment,
  DeploymentConfig,
  DeploymentState,
  OutboxEntry,
  PlanStep,
  StepScript,
  StepState,
} from '../../../../domain/deployments/types.js';
import type { Command, CommandStatus, Target } from '../../../../domain/targets/types.js';
import { aDeployment, aPlan } from '../../../fakes/deployments.js';

const NOW = new Date('2026-11-22T10:01:00.000Z'); // 60 s after the deployment started (aDeployment)
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const BASE_STEP = aPlan().steps[0]!;
const SCRIPT: StepScript = { script: 'echo do', interpreter: 'sh', rollbackScript: 'echo undo', timeoutSeconds: null };
const PINNED = { [BASE_STEP.actionVersionId]: SCRIPT };

const targetOf = (stepId: string) => stepId.split('-')[0]!;

/** `t1-s2` is the 2nd step on target t1; `t1-s2-rollback` rolls it back. Started 30 s ago unless pending. */
const step = (id: string, state: StepState = 'pending', overrides: Partial<PlanStep> = {}): PlanStep => ({
  ...BASE_STEP,
  id,
  targetId: targetOf(id),
  targetName: `host-${targetOf(id)}`,
  actionOrder: Number(id.split('-')[1]!.slice(1)),
  state,
  startedAt: state === 'pending' || state === 'skipped' ? null : ago(30_000),
  completedAt: state === 'completed' || state === 'failed' ? ago(10_000) : null,
  exitCode: state === 'completed' ? 0 : state === 'failed' ? 1 : null,
  ...(id.endsWith('-rollback') ? { rollbackOf: id.slice(0, -'-rollback'.length) } : {}),
  ...overrides,
});

/** The command of a step's attempt; `exitCode` makes it completed with that result. Created 2 s ago unless told. */
const command = (
  stepId: string,
  attempt: number,
  status: CommandStatus,
  exitCode?: number,
  overrides: Partial<Command> = {},
): Command => ({
  id: commandIdOf(stepId, attempt),
  targetId: targetOf(stepId),
  deploymentId: aDeployment().id,
  stepId,
  attempt,
  action: { id: BASE_STEP.actionId, slug: BASE_STEP.actionSlug, version: BASE_STEP.actionVersion },
  script: 'echo do',
  interpreter: 'sh',
  variables: {},
  secretVariables: [],
  sealedSecrets: true,
  timeoutSeconds: null,
  status,
  createdAt: ago(2_000),
  deliveredAt: status === 'queued' ? null : ago(1_000),
  cancelRequestedAt: null,
  outputSeq: -1,
  result:
    exitCode === undefined ? null : { exitCode, startedAt: ago(30_000), completedAt: ago(1_000), errorMessage: null },
  ...overrides,
});

const target = (id: string, lastHeartbeatAt: string | null = ago(1_000)): Target => ({
  id,
  shortId: id,
  name: `host-${id}`,
  hostname: id,
  os: 'linux',
  arch: 'x64',
  agentVersion: '1.0.0',
  tags: [],
  tenantId: null,
  environmentId: null,
  agentTokenHash: `h-${id}`,
  lastHeartbeatAt,
  createdAt: '2026-11-22T09:00:00.000Z',
  updatedAt: '2026-11-22T09:00:00.000Z',
});

interface Given {
  readonly steps: readonly PlanStep[];
  readonly commands?: readonly Command[];
  /** Default: t1..t4, heard from 1 s ago. */
  readonly targets?: readonly Target[];
  readonly config?: Partial<DeploymentConfig>;
  readonly state?: DeploymentState;
  /** 1: the first pass of a new deployment (default 2). */
  readonly revision?: number;
  readonly errorMessage?: string | null;
  /** Default DEPLOYMENT_MAX_SECONDS. */
  readonly maxDeploymentSeconds?: number;
  /** A plan made before scripts were pinned, with the catalog read so far. */
  readonly catalog?: ReadonlyMap<string, StepScript | undefined>;
}

interface Expected {
  /** `id:state` of every step of the deployment written; null when nothing is written. */
  readonly steps: readonly string[] | null;
  readonly launches: readonly string[];
  /** `wake t1`, `cancel <command id>`, in order. */
  readonly signals: readonly string[];
  /** `state_change a->b`, `step_update id:state`, `progress <message>`. */
  readonly events: readonly string[];
  /** Matched against the deployment written. */
  readonly deployment?: Partial<Deployment>;
  /** Matched against steps of the deployment written, by id. */
  readonly step?: Readonly<Record<string, Partial<PlanStep>>>;
  /** What the end owes (matched), or undefined when the write does not end the deployment. */
  readonly owed?: Partial<OutboxEntry> | undefined;
}

const given = (g: Given) => {
  const base = aDeployment();
  const deployment: Deployment = {
    ...base,
    state: g.state ?? 'running',
    revision: g.revision ?? 2,
    errorMessage: g.errorMessage ?? null,
    totalSteps: g.steps.length,
    config: { ...base.config, ...g.config },
    plan: aPlan({
      steps: g.steps,
      targetCount: new Set(g.steps.map((s) => s.targetId)).size,
      ...(g.catalog === undefined ? { scripts: PINNED } : {}),
    }),
  };
  const commands = currentCommands(g.steps, g.commands ?? []);
  const targets = new Map((g.targets ?? ['t1', 't2', 't3', 't4'].map((id) => target(id))).map((t) => [t.id, t]));
  return { deployment, commands, targets };
};

const run = (g: Given): Decision | ScriptsNeeded => {
  const { deployment, commands, targets } = given(g);
  return decide(deployment, commands, targets, NOW, {
    maxDeploymentSeconds: g.maxDeploymentSeconds ?? 604_800,
    ...(g.catalog === undefined ? {} : { catalog: g.catalog }),
  });
};

const decided = (g: Given): Decision => {
  const decision = run(g);
  if (decision.kind !== 'decision') throw new Error(`expected a decision, got ${JSON.stringify(decision)}`);
  return decision;
};

const summary = (d: Decision) => ({
  steps: d.next === undefined ? null : d.next.plan.steps.map((s) => `${s.id}:${s.state}`),
  launches: d.launches.map((c) => c.id),
  signals: d.signals.map((s) =>
    s.kind === 'wake_agent'
      ? `wake ${s.targetId}`
      : s.kind === 'push_again'
        ? `push ${s.command.id}`
        : `cancel ${s.commandId}`,
  ),
  events: d.events.map((e) =>
    e.type === 'state_change'
      ? `state_change ${e.oldState}->${e.newState}`
      : e.type === 'step_update'
        ? `step_update ${e.step.id}:${e.step.state}`
        : `progress ${e.message}`,
  ),
});

const cases: readonly { readonly name: string; readonly given: Given; readonly expect: Expected }[] = [
  // The first pass and the target modes.
  {
    name: 'first pass, sequential: the first step of the first target starts, and the deployment is announced',
    given: {
      revision: 1,
      config: { targetMode: 'sequential' },
      steps: [step('t1-s1'), step('t1-s2'), step('t2-s1'), step('t2-s2')],
    },
    expect: {
      steps: ['t1-s1:running', 't1-s2:pending', 't2-s1:pending', 't2-s2:pending'],
      launches: [commandIdOf('t1-s1', 1)],
      signals: [],
      events: ['state_change pending->running', 'step_update t1-s1:running', 'progress 0 of 4 step(s) finished'],
      deployment: { state: 'running', revision: 2, progress: 0, completedAt: null, totalSteps: 4 },
      step: { 't1-s1': { startedAt: NOW.toISOString() } },
      owed: undefined,
    },
  },
  {
    name: 'first pass, parallel: the first step of every target starts',
    given: {
      config: { targetMode: 'parallel' },
      steps: [step('t1-s1'), step('t1-s2'), step('t2-s1'), step('t2-s2'), step('t3-s1'), step('t3-s2')],
    },
    expect: {
      steps: ['t1-s1:running', 't1-s2:pending', 't2-s1:running', 't2-s2:pending', 't3-s1:running', 't3-s2:pending'],
      launches: ['t1-s1', 't2-s1', 't3-s1'].map((id) => commandIdOf(id, 1)),
      signals: [],
      events: [
        'step_update t1-s1:running',
        'step_update t2-s1:running',
        'step_update t3-s1:running',
        'progress 0 of 6 step(s) finished',
      ],
    },
  },
  {
    name: 'first pass, rolling by 2: the first batch of targets starts',
    given: {
      config: { targetMode: { rolling: { batch_size: 2 } } },
      steps: [step('t1-s1'), step('t2-s1'), step('t3-s1')],
    },
    expect: {
      steps: ['t1-s1:running', 't2-s1:running', 't3-s1:pending'],
      launches: [commandIdOf('t1-s1', 1), commandIdOf('t2-s1', 1)],
      signals: [],
      events: ['step_update t1-s1:running', 'step_update t2-s1:running', 'progress 0 of 3 step(s) finished'],
    },
  },
  {
    name: 'rolling: the next batch waits while a target of the current one still runs (nothing written)',
    given: {
      config: { targetMode: { rolling: { batch_size: 2 } } },
      steps: [step('t1-s1', 'completed'), step('t2-s1', 'running'), step('t3-s1')],
      commands: [command('t1-s1', 1, 'completed', 0), command('t2-s1', 1, 'delivered')],
    },
    expect: { steps: null, launches: [], signals: [], events: [] },
  },
  {
    name: 'rolling: the last step of the current batch completes, the next batch starts',
    given: {
      config: { targetMode: { rolling: { batch_size: 2 } } },
      steps: [step('t1-s1', 'completed'), step('t2-s1', 'running'), step('t3-s1')],
      commands: [command('t1-s1', 1, 'completed', 0), command('t2-s1', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:completed', 't2-s1:completed', 't3-s1:running'],
      launches: [commandIdOf('t3-s1', 1)],
      signals: [],
      events: ['step_update t2-s1:completed', 'step_update t3-s1:running', 'progress 2 of 3 step(s) finished'],
      deployment: { completedSteps: 2, failedSteps: 0, progress: 2 / 3 },
    },
  },

  // Results.
  {
    name: 'a completed command completes its step and starts the next one on that target',
    given: {
      config: { targetMode: 'sequential' },
      steps: [step('t1-s1', 'running'), step('t1-s2'), step('t2-s1')],
      commands: [command('t1-s1', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:running', 't2-s1:pending'],
      launches: [commandIdOf('t1-s2', 1)],
      signals: [],
      events: ['step_update t1-s1:completed', 'step_update t1-s2:running', 'progress 1 of 3 step(s) finished'],
      step: {
        't1-s1': { exitCode: 0, errorMessage: null, completedAt: NOW.toISOString(), durationMs: 30_000 },
      },
      deployment: { completedSteps: 1, progress: 1 / 3 },
    },
  },
  {
    name: 'a failed command with retries left: the step stays running and attempt 2 is launched',
    given: {
      config: { maxRetries: 2 },
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'completed', 3)],
    },
    expect: {
      steps: ['t1-s1:running'],
      launches: [commandIdOf('t1-s1', 2)],
      signals: [],
      events: ['step_update t1-s1:running', 'progress 0 of 1 step(s) finished'],
      step: { 't1-s1': { retryCount: 1, exitCode: 3, errorMessage: 'exit code 3', startedAt: ago(30_000) } },
      deployment: { state: 'running', failedSteps: 0 },
    },
  },
  {
    name: 'the last retry failed: the step fails with the exit code (stop_on_first_failure, nothing else runs)',
    given: {
      config: { maxRetries: 1, failureStrategy: 'stop_on_first_failure' },
      steps: [step('t1-s1', 'running', { retryCount: 1 }), step('t1-s2')],
      commands: [command('t1-s1', 1, 'completed', 3), command('t1-s1', 2, 'completed', 3)],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:skipped'],
      launches: [],
      signals: [],
      events: [
        'step_update t1-s1:failed',
        'step_update t1-s2:skipped',
        'progress 1 of 2 step(s) finished',
        'state_change running->failed',
      ],
      step: { 't1-s1': { retryCount: 1, exitCode: 3, errorMessage: 'The command exited with code 3.' } },
      deployment: {
        state: 'failed',
        failedSteps: 1,
        completedSteps: 0,
        progress: 1,
        errorMessage: '1 step(s) failed.',
        completedAt: NOW.toISOString(),
        durationMs: 60_000,
      },
      owed: { cancelCommands: true, wakeDispatcher: true, finalEvent: expect.objectContaining({ newState: 'failed' }) },
    },
  },
  {
    name: 'stop_on_first_failure: nothing new starts while another target still runs; nothing is skipped yet',
    given: {
      config: { targetMode: 'parallel', failureStrategy: 'stop_on_first_failure' },
      steps: [step('t1-s1', 'running'), step('t1-s2'), step('t2-s1', 'running'), step('t2-s2')],
      commands: [command('t1-s1', 1, 'completed', 2), command('t2-s1', 1, 'delivered')],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:pending', 't2-s1:running', 't2-s2:pending'],
      launches: [],
      signals: [],
      events: ['step_update t1-s1:failed', 'progress 1 of 4 step(s) finished'],
      deployment: { state: 'running', failedSteps: 1 },
    },
  },
  {
    name: 'stop_on_first_failure: once the last running step ends, waiting steps are skipped and it fails',
    given: {
      config: { targetMode: 'parallel', failureStrategy: 'stop_on_first_failure' },
      steps: [step('t1-s1', 'failed'), step('t1-s2'), step('t2-s1', 'running'), step('t2-s2')],
      commands: [command('t1-s1', 1, 'completed', 2), command('t2-s1', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:skipped', 't2-s1:completed', 't2-s2:skipped'],
      launches: [],
      signals: [],
      events: [
        'step_update t2-s1:completed',
        'step_update t1-s2:skipped',
        'step_update t2-s2:skipped',
        'progress 2 of 4 step(s) finished',
        'state_change running->failed',
      ],
      deployment: {
        state: 'failed',
        completedSteps: 1,
        failedSteps: 1,
        progress: 1,
        errorMessage: '1 step(s) failed.',
      },
      owed: { cancelCommands: true },
    },
  },
  {
    name: 'continue_on_failure: the failed target runs nothing more, the next target starts',
    given: {
      config: { targetMode: 'sequential', failureStrategy: 'continue_on_failure' },
      steps: [step('t1-s1', 'running'), step('t1-s2'), step('t2-s1'), step('t2-s2')],
      commands: [command('t1-s1', 1, 'completed', 1)],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:skipped', 't2-s1:running', 't2-s2:pending'],
      launches: [commandIdOf('t2-s1', 1)],
      signals: [],
      events: [
        'step_update t1-s1:failed',
        'step_update t1-s2:skipped',
        'step_update t2-s1:running',
        'progress 1 of 4 step(s) finished',
      ],
      deployment: { state: 'running', failedSteps: 1, progress: 0.5 },
    },
  },
  {
    name: 'ignore_failures: the target goes on after a failed step',
    given: {
      config: { failureStrategy: 'ignore_failures' },
      steps: [step('t1-s1', 'running'), step('t1-s2')],
      commands: [command('t1-s1', 1, 'completed', 1)],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:running'],
      launches: [commandIdOf('t1-s2', 1)],
      signals: [],
      events: ['step_update t1-s1:failed', 'step_update t1-s2:running', 'progress 1 of 2 step(s) finished'],
      deployment: { state: 'running', failedSteps: 1 },
    },
  },
  {
    name: 'ignore_failures: all finished with a failed step is a success, failed steps counted',
    given: {
      config: { failureStrategy: 'ignore_failures', rollbackStrategy: 'all_executed' },
      steps: [step('t1-s1', 'failed'), step('t1-s2', 'running')],
      commands: [command('t1-s1', 1, 'completed', 1), command('t1-s2', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:completed'],
      launches: [],
      signals: [],
      events: ['step_update t1-s2:completed', 'progress 2 of 2 step(s) finished', 'state_change running->success'],
      deployment: { state: 'success', completedSteps: 1, failedSteps: 1, progress: 1, errorMessage: null },
      owed: {
        cancelCommands: false,
        finalEvent: { oldState: 'running', newState: 'success', message: 'All steps completed.' },
      },
    },
  },

  // The end.
  {
    name: 'every step completed: success, progress 1, counts, the end owed (no cancel notices)',
    given: {
      steps: [step('t1-s1', 'completed'), step('t1-s2', 'running')],
      commands: [command('t1-s1', 1, 'completed', 0), command('t1-s2', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:completed'],
      launches: [],
      signals: [],
      events: ['step_update t1-s2:completed', 'progress 2 of 2 step(s) finished', 'state_change running->success'],
      deployment: {
        state: 'success',
        completedSteps: 2,
        failedSteps: 0,
        progress: 1,
        totalSteps: 2,
        errorMessage: null,
        completedAt: NOW.toISOString(),
        durationMs: 60_000,
        revision: 3,
      },
      owed: {
        deploymentId: aDeployment().id,
        at: NOW.toISOString(),
        cancelCommands: false,
        wakeDispatcher: true,
        finalEvent: { oldState: 'running', newState: 'success', message: 'All steps completed.' },
      },
    },
  },
  {
    name: 'nothing changed (a command still running, its agent answering): no write, no event, no launch',
    given: {
      steps: [step('t1-s1', 'running'), step('t1-s2')],
      commands: [command('t1-s1', 1, 'delivered')],
    },
    expect: { steps: null, launches: [], signals: [], events: [] },
  },

  // Rollback.
  {
    name: 'failed_target_only: a failure at the end starts the rollback of the failed target, newest step first',
    given: {
      config: {
        targetMode: 'parallel',
        failureStrategy: 'continue_on_failure',
        rollbackStrategy: 'failed_target_only',
      },
      steps: [
        step('t1-s1', 'completed', { startedAt: ago(50_000) }),
        step('t1-s2', 'running', { startedAt: ago(30_000) }),
        step('t2-s1', 'completed', { startedAt: ago(50_000) }),
      ],
      commands: [
        command('t1-s1', 1, 'completed', 0),
        command('t1-s2', 1, 'completed', 1),
        command('t2-s1', 1, 'completed', 0),
      ],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't2-s1:completed', 't1-s2-rollback:running', 't1-s1-rollback:pending'],
      launches: [commandIdOf('t1-s2-rollback', 1)],
      signals: [],
      events: [
        'step_update t1-s2:failed',
        'step_update t1-s2-rollback:running',
        'step_update t1-s1-rollback:pending',
        'progress 3 of 5 step(s) finished',
        'state_change running->rolling_back',
      ],
      step: { 't1-s2-rollback': { rollbackOf: 't1-s2', retryCount: 0, exitCode: null } },
      deployment: {
        state: 'rolling_back',
        errorMessage: '1 step(s) failed.',
        completedSteps: 2,
        failedSteps: 1,
        totalSteps: 5,
        progress: 3 / 5,
        completedAt: null,
      },
      owed: undefined,
    },
  },
  {
    name: 'all_executed: every executed step of every target is rolled back',
    given: {
      config: { targetMode: 'parallel', failureStrategy: 'continue_on_failure', rollbackStrategy: 'all_executed' },
      steps: [step('t1-s1', 'completed', { startedAt: ago(50_000) }), step('t2-s1', 'running')],
      commands: [command('t1-s1', 1, 'completed', 0), command('t2-s1', 1, 'completed', 9)],
    },
    expect: {
      steps: ['t1-s1:completed', 't2-s1:failed', 't2-s1-rollback:running', 't1-s1-rollback:pending'],
      launches: [commandIdOf('t2-s1-rollback', 1)],
      signals: [],
      events: [
        'step_update t2-s1:failed',
        'step_update t2-s1-rollback:running',
        'step_update t1-s1-rollback:pending',
        'progress 2 of 4 step(s) finished',
        'state_change running->rolling_back',
      ],
    },
  },
  {
    name: 'rolling back: a rollback step completed, the next one starts',
    given: {
      state: 'rolling_back',
      errorMessage: '1 step(s) failed.',
      steps: [
        step('t1-s1', 'completed'),
        step('t1-s2', 'failed'),
        step('t1-s2-rollback', 'running'),
        step('t1-s1-rollback'),
      ],
      commands: [command('t1-s2-rollback', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't1-s2-rollback:completed', 't1-s1-rollback:running'],
      launches: [commandIdOf('t1-s1-rollback', 1)],
      signals: [],
      events: [
        'step_update t1-s2-rollback:completed',
        'step_update t1-s1-rollback:running',
        'progress 2 of 4 step(s) finished',
      ],
      deployment: { state: 'rolling_back', errorMessage: '1 step(s) failed.' },
    },
  },
  {
    name: 'rolling back: one rollback step at a time (the next waits while one runs)',
    given: {
      state: 'rolling_back',
      errorMessage: '1 step(s) failed.',
      steps: [
        step('t1-s1', 'completed'),
        step('t1-s2', 'failed'),
        step('t1-s2-rollback', 'running'),
        step('t1-s1-rollback'),
      ],
      commands: [command('t1-s2-rollback', 1, 'delivered')],
    },
    expect: { steps: null, launches: [], signals: [], events: [] },
  },
  {
    name: 'rolling back: the last rollback step completed: rolled_back, the original error kept',
    given: {
      state: 'rolling_back',
      errorMessage: '1 step(s) failed.',
      steps: [
        step('t1-s1', 'completed'),
        step('t1-s2', 'failed'),
        step('t1-s2-rollback', 'completed'),
        step('t1-s1-rollback', 'running'),
      ],
      commands: [command('t1-s2-rollback', 1, 'completed', 0), command('t1-s1-rollback', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't1-s2-rollback:completed', 't1-s1-rollback:completed'],
      launches: [],
      signals: [],
      events: [
        'step_update t1-s1-rollback:completed',
        'progress 2 of 4 step(s) finished',
        'state_change rolling_back->rolled_back',
      ],
      deployment: {
        state: 'rolled_back',
        errorMessage: '1 step(s) failed.',
        completedSteps: 1,
        failedSteps: 1,
        progress: 1,
      },
      owed: { cancelCommands: true, finalEvent: expect.objectContaining({ newState: 'rolled_back' }) },
    },
  },
  {
    name: 'rolling back: a failed rollback step does not stop the rollback',
    given: {
      state: 'rolling_back',
      errorMessage: '1 step(s) failed.',
      steps: [
        step('t1-s1', 'completed'),
        step('t1-s2', 'failed'),
        step('t1-s2-rollback', 'running'),
        step('t1-s1-rollback'),
      ],
      commands: [command('t1-s2-rollback', 1, 'completed', 1)],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't1-s2-rollback:failed', 't1-s1-rollback:running'],
      launches: [commandIdOf('t1-s1-rollback', 1)],
      signals: [],
      events: [
        'step_update t1-s2-rollback:failed',
        'step_update t1-s1-rollback:running',
        'progress 2 of 4 step(s) finished',
      ],
    },
  },
  {
    name: 'rolling back: all done with a failed rollback step: failed, saying so',
    given: {
      state: 'rolling_back',
      errorMessage: '1 step(s) failed.',
      steps: [
        step('t1-s1', 'completed'),
        step('t1-s2', 'failed'),
        step('t1-s2-rollback', 'failed'),
        step('t1-s1-rollback', 'running'),
      ],
      commands: [command('t1-s2-rollback', 1, 'completed', 1), command('t1-s1-rollback', 1, 'completed', 0)],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't1-s2-rollback:failed', 't1-s1-rollback:completed'],
      launches: [],
      signals: [],
      events: [
        'step_update t1-s1-rollback:completed',
        'progress 2 of 4 step(s) finished',
        'state_change rolling_back->failed',
      ],
      deployment: { state: 'failed', errorMessage: '1 step(s) failed; the rollback failed too.' },
    },
  },

  // Commands and agents.
  {
    name: 'a command past its own timeout with its agent answering: the engine waits for the agent to report',
    given: {
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'delivered', undefined, { timeoutSeconds: 10, createdAt: ago(30_000) })],
    },
    expect: { steps: null, launches: [], signals: [], events: [] },
  },
  {
    name: 'a command the agent stopped at its timeout (exit 124): the step fails like any exit code',
    given: {
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'completed', 124, { timeoutSeconds: 10 })],
    },
    expect: {
      steps: ['t1-s1:failed'],
      launches: [],
      signals: [],
      events: ['step_update t1-s1:failed', 'progress 1 of 1 step(s) finished', 'state_change running->failed'],
      step: { 't1-s1': { exitCode: 124, errorMessage: 'The command exited with code 124.' } },
    },
  },
  {
    name: 'a command cancelled before it started: the step fails',
    given: {
      config: { failureStrategy: 'continue_on_failure', targetMode: 'parallel' },
      steps: [step('t1-s1', 'running'), step('t2-s1', 'running')],
      commands: [command('t1-s1', 1, 'cancelled'), command('t2-s1', 1, 'delivered')],
    },
    expect: {
      steps: ['t1-s1:failed', 't2-s1:running'],
      launches: [],
      signals: [],
      events: ['step_update t1-s1:failed', 'progress 1 of 2 step(s) finished'],
      step: { 't1-s1': { exitCode: null, errorMessage: 'The command was cancelled before it started.' } },
    },
  },
  {
    name: 'a target not heard from for 60 s: its command is stopped and its step fails',
    given: {
      steps: [step('t1-s1', 'running'), step('t1-s2')],
      commands: [command('t1-s1', 1, 'delivered', undefined, { createdAt: ago(30_000) })],
      targets: [target('t1', ago(61_000))],
    },
    expect: {
      steps: ['t1-s1:failed', 't1-s2:skipped'],
      launches: [],
      signals: [`cancel ${commandIdOf('t1-s1', 1)}`],
      events: [
        'step_update t1-s1:failed',
        'step_update t1-s2:skipped',
        'progress 1 of 2 step(s) finished',
        'state_change running->failed',
      ],
      step: {
        't1-s1': {
          exitCode: null,
          errorMessage: `Target host-t1 is not answering: its agent has not been heard from for 60 s (last heard from at ${ago(61_000)}).`,
        },
      },
      deployment: { state: 'failed' },
    },
  },
  {
    name: 'a target heard from 59 s ago still answers',
    given: {
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'delivered', undefined, { createdAt: ago(30_000) })],
      targets: [target('t1', ago(59_000))],
    },
    expect: { steps: null, launches: [], signals: [], events: [] },
  },
  {
    name: 'a target deleted while its step ran (its command still queued 5 s): woken, then stopped, the step fails',
    given: {
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'queued', undefined, { createdAt: ago(5_000) })],
      targets: [],
    },
    expect: {
      steps: ['t1-s1:failed'],
      launches: [],
      signals: ['wake t1', `cancel ${commandIdOf('t1-s1', 1)}`],
      events: ['step_update t1-s1:failed', 'progress 1 of 1 step(s) finished', 'state_change running->failed'],
      step: { 't1-s1': { errorMessage: 'Target host-t1 was deleted while the step ran.' } },
    },
  },
  {
    name: 'a command still queued 5 s after it was pushed: its agent is woken again, nothing written',
    given: {
      config: { targetMode: 'parallel' },
      steps: [step('t1-s1', 'running'), step('t2-s1', 'running')],
      commands: [
        command('t1-s1', 1, 'queued', undefined, { createdAt: ago(5_000) }),
        command('t2-s1', 1, 'queued', undefined, { createdAt: ago(4_999) }),
      ],
    },
    expect: { steps: null, launches: [], signals: ['wake t1'], events: [] },
  },
  {
    name: 'a command pushed to its agent 5 s ago and not acknowledged: pushed again; one acknowledged is left alone',
    given: {
      config: { targetMode: 'parallel' },
      steps: [step('t1-s1', 'running'), step('t2-s1', 'running'), step('t3-s1', 'running')],
      commands: [
        command('t1-s1', 1, 'delivered', undefined, {
          pushedTo: { connectionId: 'c1', instance: 'i1', at: ago(5_000) },
        }),
        command('t2-s1', 1, 'delivered', undefined, {
          pushedTo: { connectionId: 'c2', instance: 'i2', at: ago(4_999) },
        }),
        command('t3-s1', 1, 'delivered'),
      ],
    },
    expect: { steps: null, launches: [], signals: [`push ${commandIdOf('t1-s1', 1)}`], events: [] },
  },

  // The overall timeout.
  {
    name: 'deployment_timeout_seconds reached: running steps stopped (124), waiting ones skipped, no rollback',
    given: {
      config: { deploymentTimeoutSeconds: 60, rollbackStrategy: 'all_executed' },
      steps: [step('t1-s1', 'completed'), step('t1-s2', 'running'), step('t1-s3')],
      commands: [command('t1-s1', 1, 'completed', 0), command('t1-s2', 1, 'delivered')],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't1-s3:skipped'],
      launches: [],
      signals: [`cancel ${commandIdOf('t1-s2', 1)}`],
      events: [
        'step_update t1-s2:failed',
        'step_update t1-s3:skipped',
        'progress 2 of 3 step(s) finished',
        'state_change running->failed',
      ],
      step: { 't1-s2': { exitCode: 124, errorMessage: 'Stopped: the deployment timed out.' } },
      deployment: {
        state: 'failed',
        errorMessage: 'The deployment timed out after 60 s; running commands were stopped.',
        completedSteps: 1,
        failedSteps: 1,
        progress: 1,
      },
      owed: { cancelCommands: true },
    },
  },
  {
    name: 'a second before deployment_timeout_seconds: nothing happens',
    given: {
      config: { deploymentTimeoutSeconds: 61 },
      steps: [step('t1-s1', 'running'), step('t1-s2')],
      commands: [command('t1-s1', 1, 'delivered')],
    },
    expect: { steps: null, launches: [], signals: [], events: [] },
  },
  {
    name: "without deployment_timeout_seconds, the service's ceiling applies, and says so",
    given: {
      config: { deploymentTimeoutSeconds: 0 },
      maxDeploymentSeconds: 60,
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'delivered')],
    },
    expect: {
      steps: ['t1-s1:failed'],
      launches: [],
      signals: [`cancel ${commandIdOf('t1-s1', 1)}`],
      events: ['step_update t1-s1:failed', 'progress 1 of 1 step(s) finished', 'state_change running->failed'],
      step: { 't1-s1': { exitCode: 124, errorMessage: "Stopped: the deployment reached the service's time ceiling." } },
      deployment: {
        errorMessage:
          "The deployment reached the service's ceiling of 60 s (DEPLOYMENT_MAX_SECONDS; it set no deployment_timeout_seconds); running commands were stopped.",
      },
    },
  },
  {
    name: 'the timeout during a rollback: the rollback stops, the deployment fails saying both',
    given: {
      state: 'rolling_back',
      errorMessage: '1 step(s) failed.',
      config: { deploymentTimeoutSeconds: 60 },
      steps: [
        step('t1-s1', 'completed'),
        step('t1-s2', 'failed'),
        step('t1-s2-rollback', 'running'),
        step('t1-s1-rollback'),
      ],
      commands: [command('t1-s2-rollback', 1, 'delivered')],
    },
    expect: {
      steps: ['t1-s1:completed', 't1-s2:failed', 't1-s2-rollback:failed', 't1-s1-rollback:skipped'],
      launches: [],
      signals: [`cancel ${commandIdOf('t1-s2-rollback', 1)}`],
      events: [
        'step_update t1-s2-rollback:failed',
        'step_update t1-s1-rollback:skipped',
        'progress 2 of 4 step(s) finished',
        'state_change rolling_back->failed',
      ],
      deployment: {
        state: 'failed',
        errorMessage:
          '1 step(s) failed; during the rollback: The deployment timed out after 60 s; running commands were stopped.',
      },
    },
  },

  // Scripts.
  {
    name: 'a step whose version the pinned plan does not hold fails instead of starting',
    given: {
      steps: [step('t1-s1', 'pending', { actionVersionId: 'not-pinned' })],
    },
    expect: {
      steps: ['t1-s1:failed'],
      launches: [],
      signals: [],
      events: ['step_update t1-s1:failed', 'progress 1 of 1 step(s) finished', 'state_change running->failed'],
      step: {
        't1-s1': {
          errorMessage: `Version ${BASE_STEP.actionVersion} of action ${BASE_STEP.actionName} no longer exists.`,
          durationMs: 0,
        },
      },
    },
  },
  {
    name: 'a plan without pins, its catalog script read: the step starts with it',
    given: {
      steps: [step('t1-s1')],
      catalog: new Map([[scriptKey({ actionId: BASE_STEP.actionId, version: BASE_STEP.actionVersion }), SCRIPT]]),
    },
    expect: {
      steps: ['t1-s1:running'],
      launches: [commandIdOf('t1-s1', 1)],
      signals: [],
      events: ['step_update t1-s1:running', 'progress 0 of 1 step(s) finished'],
    },
  },
  {
    name: 'a plan without pins whose version left the catalog: the step fails',
    given: {
      steps: [step('t1-s1')],
      catalog: new Map([[scriptKey({ actionId: BASE_STEP.actionId, version: BASE_STEP.actionVersion }), undefined]]),
    },
    expect: {
      steps: ['t1-s1:failed'],
      launches: [],
      signals: [],
      events: ['step_update t1-s1:failed', 'progress 1 of 1 step(s) finished', 'state_change running->failed'],
    },
  },
];

describe('decide', () => {
  it.each(cases)('$name', ({ given: g, expect: want }) => {
    // Act
    const decision = decided(g);
    // Assess
    expect(summary(decision)).toEqual({
      steps: want.steps,
      launches: want.launches,
      signals: want.signals,
      events: want.events,
    });
    if (want.deployment !== undefined) expect(decision.next).toMatchObject(want.deployment);
    for (const [id, fields] of Object.entries(want.step ?? {}))
      expect(decision.next?.plan.steps.find((s) => s.id === id)).toMatchObject(fields);
    if ('owed' in want)
      if (want.owed === undefined) expect(decision.owed).toBeUndefined();
      else expect(decision.owed).toMatchObject(want.owed);
    // A decision ends the deployment exactly when it owes an end.
    expect(decision.owed !== undefined).toBe(
      decision.next !== undefined && ['success', 'failed', 'rolled_back'].includes(decision.next.state),
    );
  });
});

describe('passes caused by an event (not a periodic check)', () => {
  it('neither wake agents again nor push again: a burst of completions does not repeat them', () => {
    // Arrange
    const { deployment, commands, targets } = given({
      config: { targetMode: 'parallel' },
      steps: [step('t1-s1', 'running'), step('t2-s1', 'running')],
      commands: [
        command('t1-s1', 1, 'queued', undefined, { createdAt: ago(6_000) }),
        command('t2-s1', 1, 'delivered', undefined, {
          pushedTo: { connectionId: 'c2', instance: 'i2', at: ago(6_000) },
        }),
      ],
    });
    // Act
    const event = decide(deployment, commands, targets, NOW, { maxDeploymentSeconds: 604_800, check: false });
    const check = decide(deployment, commands, targets, NOW, { maxDeploymentSeconds: 604_800, check: true });
    // Assess
    expect(event.kind === 'decision' && event.signals).toEqual([]);
    expect(check.kind === 'decision' && check.signals.map((s) => s.kind)).toEqual(['wake_agent', 'push_again']);
  });
});

describe('what decide is given and returns', () => {
  it('a launched command carries the plan’s variables (secrets named, kept sealed) and its script’s timeout', () => {
    // Prepare
    const { deployment, commands, targets } = given({ steps: [step('t1-s1')] });
    const sealed: Deployment = {
      ...deployment,
      plan: {
        ...deployment.plan,
        resolvedVariables: { PORT: { value: '80', secret: false }, TOKEN: { value: 'enc:xyz', secret: true } },
        scripts: { [BASE_STEP.actionVersionId]: { ...SCRIPT, timeoutSeconds: 5 } },
      },
    };
    // Act
    const decision = decide(sealed, commands, targets, NOW, { maxDeploymentSeconds: 604_800 }) as Decision;
    // Assess
    expect(decision.launches).toEqual([
      {
        id: 't1-s1-a1',
        targetId: 't1',
        targetName: 'host-t1',
        deploymentId: deployment.id,
        stepId: 't1-s1',
        attempt: 1,
        action: { id: BASE_STEP.actionId, slug: BASE_STEP.actionSlug, version: BASE_STEP.actionVersion },
        script: 'echo do',
        interpreter: 'sh',
        variables: { PORT: '80', TOKEN: 'enc:xyz' },
        secretVariables: ['TOKEN'],
        sealedSecrets: true,
        timeoutSeconds: 5,
        status: 'queued',
        createdAt: NOW.toISOString(),
        deliveredAt: null,
        cancelRequestedAt: null,
        outputSeq: -1,
        result: null,
      },
    ]);
  });

  it('without a script timeout the command takes the deployment’s; a rollback step runs the rollback script', () => {
    const decision = decided({
      state: 'rolling_back',
      config: { timeoutSeconds: 42 },
      steps: [step('t1-s1', 'failed'), step('t1-s1-rollback')],
    });
    expect(decision.launches.map((c) => [c.id, c.script, c.timeoutSeconds])).toEqual([
      [commandIdOf('t1-s1-rollback', 1), 'echo undo', 42],
    ]);
  });

  it('a plan without pins asks for the catalog scripts it needs (each version once), then for the rollback', () => {
    // Prepare
    const key = scriptKey({ actionId: BASE_STEP.actionId, version: BASE_STEP.actionVersion });
    const starting: Given = {
      config: { targetMode: 'parallel' },
      steps: [step('t1-s1'), step('t2-s1')],
      catalog: new Map(),
    };
    const failing: Given = {
      config: { rollbackStrategy: 'all_executed' },
      steps: [step('t1-s1', 'running')],
      commands: [command('t1-s1', 1, 'completed', 1)],
      catalog: new Map(),
    };
    const waiting: Given = { ...failing, commands: [command('t1-s1', 1, 'delivered')] };
    // Act, Assess
    expect(run(starting)).toEqual({
      kind: 'read_scripts',
      refs: [{ actionId: BASE_STEP.actionId, version: BASE_STEP.actionVersion }],
    });
    expect(run(failing)).toMatchObject({ kind: 'read_scripts' });
    expect(summary(decided({ ...failing, catalog: new Map([[key, SCRIPT]]) })).launches).toEqual([
      commandIdOf('t1-s1-rollback', 1),
    ]);
    // A pass that starts nothing reads nothing.
    expect(run(waiting)).toMatchObject({ kind: 'decision', next: undefined });
  });

  it('judges each step on its current attempt’s command; reads the targets of the steps still waiting on their agent', () => {
    // Prepare: t1 retried (attempt 2 delivered); t2's attempt 2 not listed yet; t3 done; t4 cancelled; t5 not started
    const { deployment } = given({
      config: { targetMode: 'parallel' },
      steps: [
        step('t1-s1', 'running', { retryCount: 1 }),
        step('t2-s1', 'running', { retryCount: 1 }),
        step('t3-s1', 'running'),
        step('t4-s1', 'running'),
        step('t5-s1'),
      ],
    });
    // Act
    const commands = currentCommands(deployment.plan.steps, [
      command('t1-s1', 1, 'completed', 1),
      command('t1-s1', 2, 'delivered'),
      command('t2-s1', 1, 'completed', 1),
      command('t3-s1', 1, 'completed', 0),
      command('t4-s1', 1, 'cancelled'),
      command('t4-s1', 2, 'queued'), // an attempt ahead of the step (a pass that lost its write): not its current one
    ]);
    // Assess
    expect([...commands].map(([stepId, c]) => `${stepId}:${c.id}`)).toEqual([
      `t1-s1:${commandIdOf('t1-s1', 2)}`,
      `t3-s1:${commandIdOf('t3-s1', 1)}`,
      `t4-s1:${commandIdOf('t4-s1', 1)}`,
    ]);
    expect(targetsToRead(deployment, commands)).toEqual(['t1']);
  });

  it('a step whose current attempt is not listed yet waits: no second retry, no failure on the old result', () => {
    const decision = decided({
      config: { maxRetries: 1 },
      steps: [step('t1-s1', 'running', { retryCount: 1 })],
      commands: [command('t1-s1', 1, 'completed', 1)],
    });
    expect(summary(decision)).toEqual({ steps: null, launches: [], signals: [], events: [] });
  });

  it('is pure: the same input gives the same decision, and the input is left as it was', () => {
    const g: Given = {
      config: { targetMode: 'parallel', maxRetries: 1 },
      steps: [step('t1-s1', 'running'), step('t2-s1')],
      commands: [command('t1-s1', 1, 'completed', 1)],
    };
    const { deployment, commands, targets } = given(g);
    const before = structuredClone(deployment);
    const first = decide(deployment, commands, targets, NOW, { maxDeploymentSeconds: 604_800 });
    const second = decide(deployment, commands, targets, NOW, { maxDeploymentSeconds: 604_800 });
    expect(second).toEqual(first);
    expect(deployment).toEqual(before);
    expect(summary(first as Decision).launches).toEqual([commandIdOf('t1-s1', 2), commandIdOf('t2-s1', 1)]);
  });
});
