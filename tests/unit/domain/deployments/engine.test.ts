// The engine's decisions on fakes: which steps start per target mode and failure strategy, retries, results,
// targets that stop answering, the overall timeout, and the end of a deployment.
import { describe, expect, it } from 'vitest';
import { advance, commandIdOf, type EngineDeps } from '../../../../domain/deployments/engine.js';
import { owedBy, settleOutbox } from '../../../../domain/deployments/outbox.js';
import type { Deployment, DeploymentConfig, PlanStep } from '../../../../domain/deployments/types.js';
import type { Target } from '../../../../domain/targets/types.js';
import { aDeployment, aPlan, deploymentsFakes } from '../../../fakes/deployments.js';
import { noAgentChannel } from '../../../../domain/targets/agent-dispatch.js';
import { FakeCommandRepository } from '../../../fakes/targets.js';

const T = ['t1', 't2', 't3', 't4'];
const target = (id: string, lastHeartbeatAt: string | null): Target => ({
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
const step = (targetId: string, order: number): PlanStep => ({
  ...aPlan().steps[0]!,
  id: `${targetId}-s${order}`,
  targetId,
  targetName: `host-${targetId}`,
  actionOrder: order,
});

const setup = (targets: readonly string[], stepsPerTarget: number, config: Partial<DeploymentConfig> = {}) => {
  const fakes = deploymentsFakes(4);
  const commands = new FakeCommandRepository();
  const heartbeats = new Map(T.map((id) => [id, fakes.clock.now().toISOString()] as const));
  const wakes: { id: string; check: boolean }[] = [];
  const deps: EngineDeps = {
    deployments: fakes.deployments,
    orchestration: fakes.orchestration,
    dispatch: fakes.dispatch,
    commands,
    agents: noAgentChannel(commands),
    targets: { getMany: async (ids) => ids.map((id) => target(id, heartbeats.get(id) ?? null)) },
    scripts: {
      find: async () => ({ script: 'echo hi', interpreter: 'sh', rollbackScript: 'echo undo', timeoutSeconds: null }),
    },
    cipher: { encrypt: (v) => v, decrypt: (v) => v },
    engine: { wake: async (id, options) => void wakes.push({ id, check: options?.check === true }) },
    clock: fakes.clock,
  };
  const steps = targets.flatMap((t) => Array.from({ length: stepsPerTarget }, (_, i) => step(t, i + 1)));
  const base = aDeployment();
  const deployment: Deployment = {
    ...base,
    totalSteps: steps.length,
    plan: aPlan({ steps, targetCount: targets.length }),
    config: { ...base.config, ...config },
  };
  return { ...fakes, deps, commands, heartbeats, wakes, deployment };
};

type Setup = ReturnType<typeof setup>;
const start = async (s: Setup) => {
  await s.orchestration.start(s.deployment);
  await advance(s.deps, s.deployment.id);
};
const states = async (s: Setup) => (await s.deployments.get(s.deployment.id))!.plan.steps.map((p) => p.state);
/** The agent reports the latest attempt of `stepId` with `exitCode`, then the engine is woken. */
const report = async (s: Setup, stepId: string, exitCode: number) => {
  const latest = (await s.commands.listByDeployment(s.deployment.id))
    .filter((c) => c.stepId === stepId)
    .sort((a, b) => b.attempt - a.attempt)[0]!;
  await s.commands.claimInbox(latest.targetId, 25, s.clock.now());
  await s.commands.complete(latest.id, {
    exitCode,
    startedAt: s.clock.now().toISOString(),
    completedAt: s.clock.now().toISOString(),
    errorMessage: null,
  });
  await advance(s.deps, s.deployment.id);
};

describe('target modes', () => {
  it('sequential: one target at a time, its steps in order', async () => {
    const s = setup(['t1', 't2'], 2, { targetMode: 'sequential' });
    await start(s);
    expect(await states(s)).toEqual(['running', 'pending', 'pending', 'pending']);
    await report(s, 't1-s1', 0);
    expect(await states(s)).toEqual(['completed', 'running', 'pending', 'pending']);
    await report(s, 't1-s2', 0);
    expect(await states(s)).toEqual(['completed', 'completed', 'running', 'pending']);
  });

  it('parallel: every target at once, each target’s steps in order', async () => {
    const s = setup(['t1', 't2', 't3'], 2, { targetMode: 'parallel' });
    await start(s);
    expect(await states(s)).toEqual(['running', 'pending', 'running', 'pending', 'running', 'pending']);
  });

  it('rolling: the next batch only after the previous one finished', async () => {
    const s = setup(['t1', 't2', 't3', 't4'], 1, { targetMode: { rolling: { batch_size: 2 } } });
    await start(s);
    expect(await states(s)).toEqual(['running', 'running', 'pending', 'pending']);
    await report(s, 't1-s1', 0);
    expect(await states(s)).toEqual(['completed', 'running', 'pending', 'pending']);
    await report(s, 't2-s1', 0);
    expect(await states(s)).toEqual(['completed', 'completed', 'running', 'running']);
  });
});

describe('failure strategies', () => {
  it('stop_on_first_failure: nothing new starts; the deployment fails when the running ones end', async () => {
    const s = setup(['t1', 't2'], 2, { targetMode: 'parallel', failureStrategy: 'stop_on_first_failure' });
    await start(s);
    await report(s, 't1-s1', 2);
    expect(await states(s)).toEqual(['failed', 'pending', 'running', 'pending']);
    await report(s, 't2-s1', 0);
    const done = (await s.deployments.get(s.deployment.id))!;
    expect(done).toMatchObject({ state: 'failed', failedSteps: 1, completedSteps: 1, progress: 1 });
    expect(done.plan.steps.map((p) => p.state)).toEqual(['failed', 'skipped', 'completed', 'skipped']);
    expect((await s.orchestration.holders()).size).toBe(0);
    expect(s.dispatch.reasons.at(-1)).toMatch(/freed/);
  });

  it('continue_on_failure: the failed target stops, the others go on; the deployment fails at the end', async () => {
    const s = setup(['t1', 't2'], 2, { targetMode: 'sequential', failureStrategy: 'continue_on_failure' });
    await start(s);
    await report(s, 't1-s1', 1);
    expect(await states(s)).toEqual(['failed', 'skipped', 'running', 'pending']);
    await report(s, 't2-s1', 0);
    await report(s, 't2-s2', 0);
    expect(await s.deployments.get(s.deployment.id)).toMatchObject({
      state: 'failed',
      completedSteps: 2,
      failedSteps: 1,
    });
  });

  it('ignore_failures: everything runs; success with failed_steps counted', async () => {
    const s = setup(['t1'], 2, { failureStrategy: 'ignore_failures' });
    await start(s);
    await report(s, 't1-s1', 1);
    await report(s, 't1-s2', 0);
    expect(await s.deployments.get(s.deployment.id)).toMatchObject({
      state: 'success',
      completedSteps: 1,
      failedSteps: 1,
    });
  });
});

describe('commands', () => {
  it('retries up to max_retries with a new command per attempt, then fails', async () => {
    const s = setup(['t1'], 1, { maxRetries: 2 });
    await start(s);
    await report(s, 't1-s1', 1);
    await report(s, 't1-s1', 1);
    expect((await s.deployments.get(s.deployment.id))!.plan.steps[0]).toMatchObject({
      state: 'running',
      retryCount: 2,
    });
    await report(s, 't1-s1', 1);
    expect((await s.deployments.get(s.deployment.id))!.plan.steps[0]).toMatchObject({
      state: 'failed',
      retryCount: 2,
      exitCode: 1,
    });
    expect((await s.commands.listByDeployment(s.deployment.id)).map((c) => c.id)).toEqual(
      [1, 2, 3].map((a) => commandIdOf('t1-s1', a)),
    );
  });

  // The command list is read from an index that may lag (DynamoDB GSIs are eventually consistent): a pass right after
  // a retry can see the deployment at the new attempt but only the previous attempt's (failed) command.
  it.each([
    ['retries left: no second retry (attempt 3) while attempt 2 is not listed yet', 2],
    ['no retries left: the step is not failed on the result attempt 2 already retried', 1],
  ])('a retry whose command the list does not show yet: %s', async (_, maxRetries) => {
    // Prepare: attempt 1 failed, attempt 2 was enqueued; the list still shows only attempt 1
    const s = setup(['t1'], 1, { maxRetries });
    await start(s);
    await report(s, 't1-s1', 1);
    const retried = (await s.deployments.get(s.deployment.id))!;
    const lagging: EngineDeps = {
      ...s.deps,
      commands: Object.assign(Object.create(s.commands) as FakeCommandRepository, {
        listByDeployment: async (id: string) =>
          (await s.commands.listByDeployment(id)).filter((c) => c.id !== commandIdOf('t1-s1', 2)),
      }),
    };
    // Act
    await advance(lagging, s.deployment.id);
    // Assess
    expect(retried.plan.steps[0]).toMatchObject({ state: 'running', retryCount: 1 });
    expect(await s.deployments.get(s.deployment.id)).toEqual(retried);
    expect((await s.commands.listByDeployment(s.deployment.id)).map((c) => c.id)).toEqual(
      [1, 2].map((a) => commandIdOf('t1-s1', a)),
    );
  });

  it('a repeated wake-up changes nothing and enqueues nothing twice', async () => {
    const s = setup(['t1'], 1);
    await start(s);
    const before = await s.deployments.get(s.deployment.id);
    await advance(s.deps, s.deployment.id);
    await advance(s.deps, s.deployment.id);
    expect(await s.deployments.get(s.deployment.id)).toEqual(before);
    expect(await s.commands.listByDeployment(s.deployment.id)).toHaveLength(1);
  });

  it("a wake-up naming a completed command acts on it though the command index still lists it running (the cloud's lag)", async () => {
    // Prepare: one step running; its command completed in the table, while the index still lists it delivered
    const s = setup(['t1', 't2'], 1, { targetMode: 'sequential' });
    await start(s);
    const [command] = await s.commands.listByDeployment(s.deployment.id);
    await s.commands.claimInbox(command!.targetId, 25, s.clock.now());
    const delivered = (await s.commands.get(command!.id))!;
    const at = s.clock.now().toISOString();
    await s.commands.complete(command!.id, { exitCode: 0, startedAt: at, completedAt: at, errorMessage: null });
    const lagging: EngineDeps = {
      ...s.deps,
      commands: Object.assign(Object.create(s.commands) as FakeCommandRepository, {
        listByDeployment: async () => [delivered],
      }),
    };
    // Act: a wake-up without the command's id, then one naming it
    await advance(lagging, s.deployment.id);
    const unnamed = await states(s);
    await advance(lagging, s.deployment.id, { completed: [command!.id] });
    // Assess: only the named one saw the completion, and started the next step
    expect(unnamed).toEqual(['running', 'pending']);
    expect(await states(s)).toEqual(['completed', 'running']);
  });

  it("an end stops the running steps' commands though the index does not list them yet (the cloud's lag)", async () => {
    // Prepare: two steps running; the index lists neither command
    const s = setup(['t1', 't2'], 1, { targetMode: 'parallel' });
    await start(s);
    const ids = (await s.commands.listByDeployment(s.deployment.id)).map((c) => c.id);
    const lagging: EngineDeps = {
      ...s.deps,
      commands: Object.assign(Object.create(s.commands) as FakeCommandRepository, {
        listByDeployment: async () => [],
      }),
    };
    const running = (await s.deployments.get(s.deployment.id))!;
    const ended: Deployment = {
      ...running,
      state: 'failed',
      completedAt: s.clock.now().toISOString(),
      revision: running.revision + 1,
    };
    // Act: the end's owed effects, settled with the lagging list
    const owed = owedBy(running, ended);
    await settleOutbox({ ...lagging, events: undefined, webhooks: undefined }, owed);
    // Assess: both named in the entry, both stopped (never delivered: cancelled)
    expect([...(owed.openCommands ?? [])].sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await s.commands.get(id))?.status).toBe('cancelled');
  });

  it('a pass that launched and then lost its write to a cancel stops what it launched', async () => {
    // Prepare: a deployment about to start its first step; a cancel lands between the pass's launch and its write
    const s = setup(['t1'], 1);
    await s.orchestration.start(s.deployment);
    const racing: EngineDeps = {
      ...s.deps,
      deployments: Object.assign(Object.create(s.deployments) as typeof s.deployments, {
        update: async (previous: Deployment) => {
          // the cancel read `previous` (no command yet), so its own stop found nothing to stop
          s.deployments.put({ ...previous, state: 'cancelled', revision: previous.revision + 1 });
          return false;
        },
      }),
    };
    // Act
    await advance(racing, s.deployment.id);
    // Assess: the command was stored by the pass, and stopped by it
    const launched = await s.commands.listByDeployment(s.deployment.id);
    expect(launched).toHaveLength(1);
    expect(launched[0]?.status).toBe('cancelled');
  });

  it('a named command the index already shows completed is not read again', async () => {
    const s = setup(['t1'], 1);
    await start(s);
    const reads: string[] = [];
    const counted: EngineDeps = {
      ...s.deps,
      commands: Object.assign(Object.create(s.commands) as FakeCommandRepository, {
        get: async (id: string) => (reads.push(id), s.commands.get(id)),
      }),
    };
    await report(s, 't1-s1', 0);
    const [command] = await s.commands.listByDeployment(s.deployment.id);
    await advance(counted, s.deployment.id, { completed: [command!.id] });
    expect(reads).toEqual([]);
    expect(await states(s)).toEqual(['completed']);
  });

  it('wakes the agent again for a command still queued 5 s after it was pushed, and not for a delivered one', async () => {
    const s = setup(['t1', 't2'], 1);
    const woken: string[] = [];
    const wake = async (id: string) => (woken.push(id), true);
    const deps: EngineDeps = { ...s.deps, agents: { ...s.deps.agents, wake } };
    await s.orchestration.start(s.deployment);
    await advance(deps, s.deployment.id);
    await s.commands.claimInbox('t2', 25, s.clock.now()); // t2's agent took its command; t1's push was lost
    await advance(deps, s.deployment.id);
    const early = [...woken];
    s.clock.advance(5_000);
    s.heartbeats.set('t1', s.clock.now().toISOString());
    await advance(deps, s.deployment.id, { check: true });
    expect(early).toEqual([]);
    expect(woken).toEqual(['t1']);
  });

  it('hands its launches to its agent dispatch, and at a check pushes again a command pushed 5 s ago and not acknowledged', async () => {
    const s = setup(['t1'], 1);
    const pushedAgain: string[] = [];
    const deps: EngineDeps = {
      ...s.deps,
      agents: {
        ...s.deps.agents,
        launch: async (commands) => {
          for (const c of commands)
            await s.commands.enqueuePushed(c, {
              connectionId: 'conn-1',
              instance: 'i1',
              at: s.clock.now().toISOString(),
            });
        },
        pushAgain: async (command, target) => void pushedAgain.push(`${command.id} ${target?.id}`),
      },
    };
    await s.orchestration.start(s.deployment);
    await advance(deps, s.deployment.id);
    await advance(deps, s.deployment.id, { check: true });
    const early = [...pushedAgain];
    s.clock.advance(5_000);
    s.heartbeats.set('t1', s.clock.now().toISOString());
    await advance(deps, s.deployment.id);
    const byEvent = [...pushedAgain];
    await advance(deps, s.deployment.id, { check: true });
    expect(early).toEqual([]);
    expect(byEvent).toEqual([]);
    expect(pushedAgain).toEqual([`${commandIdOf('t1-s1', 1)} t1`]);
  });

  it('fails the step of a target without a heartbeat for 60 s, and stops its command', async () => {
    const s = setup(['t1'], 1);
    await start(s);
    s.clock.advance(61_000);
    await advance(s.deps, s.deployment.id);
    const done = (await s.deployments.get(s.deployment.id))!;
    expect(done.state).toBe('failed');
    expect(done.plan.steps[0]!.errorMessage).toMatch(/host-t1 is not answering/);
    expect((await s.commands.listByDeployment(s.deployment.id))[0]!.status).toBe('cancelled');
  });

  it('fails the deployment at deployment_timeout_seconds, skipping what did not start', async () => {
    const s = setup(['t1'], 2, { deploymentTimeoutSeconds: 30 });
    await start(s);
    s.clock.advance(30_000);
    s.heartbeats.set('t1', s.clock.now().toISOString());
    await advance(s.deps, s.deployment.id, { check: true });
    const done = (await s.deployments.get(s.deployment.id))!;
    expect(done).toMatchObject({ state: 'failed', errorMessage: expect.stringMatching(/timed out after 30 s/) });
    expect(done.plan.steps.map((p) => p.state)).toEqual(['failed', 'skipped']);
  });

  it('keeps one periodic check chain while running, none after the end', async () => {
    const s = setup(['t1'], 1);
    await start(s);
    await advance(s.deps, s.deployment.id, { check: true });
    expect(s.wakes.filter((w) => w.check)).toHaveLength(1);
    await report(s, 't1-s1', 0);
    await advance(s.deps, s.deployment.id, { check: true });
    expect(s.wakes.filter((w) => w.check)).toHaveLength(1);
  });
});

describe('rollback', () => {
  const stepStates = async (s: Setup) =>
    (await s.deployments.get(s.deployment.id))!.plan.steps.map((p) => `${p.id}:${p.state}`);

  it('failed_target_only: rolls back the executed steps of the failed target, newest first, then rolled_back', async () => {
    const s = setup(['t1', 't2'], 2, {
      targetMode: 'sequential',
      failureStrategy: 'continue_on_failure',
      rollbackStrategy: 'failed_target_only',
    });
    await start(s);
    await report(s, 't1-s1', 0);
    s.clock.advance(1000);
    await report(s, 't1-s2', 1);
    await report(s, 't2-s1', 0);
    await report(s, 't2-s2', 0);
    expect((await s.deployments.get(s.deployment.id))!.state).toBe('rolling_back');
    expect(await stepStates(s)).toEqual([
      't1-s1:completed',
      't1-s2:failed',
      't2-s1:completed',
      't2-s2:completed',
      't1-s2-rollback:running',
      't1-s1-rollback:pending',
    ]);
    const rollback = (await s.commands.listByDeployment(s.deployment.id)).find((c) => c.stepId === 't1-s2-rollback');
    expect(rollback?.script).toBe('echo undo');
    await report(s, 't1-s2-rollback', 0);
    await report(s, 't1-s1-rollback', 0);
    const done = (await s.deployments.get(s.deployment.id))!;
    expect(done).toMatchObject({
      state: 'rolled_back',
      failedSteps: 1,
      completedSteps: 3,
      errorMessage: '1 step(s) failed.',
    });
    expect((await s.orchestration.holders()).size).toBe(0);
  });

  it('all_executed: every executed step of every target; a failed rollback leaves the deployment failed', async () => {
    const s = setup(['t1', 't2'], 1, {
      targetMode: 'parallel',
      failureStrategy: 'continue_on_failure',
      rollbackStrategy: 'all_executed',
    });
    await start(s);
    await report(s, 't1-s1', 0);
    await report(s, 't2-s1', 9);
    expect(
      (await s.deployments.get(s.deployment.id))!.plan.steps.filter((p) => p.rollbackOf !== undefined),
    ).toHaveLength(2);
    const [first] = (await s.deployments.get(s.deployment.id))!.plan.steps.filter((p) => p.state === 'running');
    await report(s, first!.id, 1);
    const second = (await s.deployments.get(s.deployment.id))!.plan.steps.find((p) => p.state === 'running');
    await report(s, second!.id, 0);
    expect(await s.deployments.get(s.deployment.id)).toMatchObject({
      state: 'failed',
      errorMessage: expect.stringMatching(/rollback failed/),
    });
  });

  it('none: a failure ends failed without rolling back', async () => {
    const s = setup(['t1'], 1, { rollbackStrategy: 'none' });
    await start(s);
    await report(s, 't1-s1', 1);
    expect((await s.deployments.get(s.deployment.id))!.state).toBe('failed');
  });
});

describe('pinned scripts', () => {
  it('runs the script pinned in the plan, not the catalog’s current one; a plan without pins reads the catalog', async () => {
    // Prepare: the catalog now answers another script than the plan pinned
    const s = setup(['t1'], 1);
    const versionId = s.deployment.plan.steps[0]!.actionVersionId;
    const pinned = {
      ...s,
      deployment: {
        ...s.deployment,
        plan: {
          ...s.deployment.plan,
          scripts: {
            [versionId]: {
              script: 'echo pinned',
              interpreter: 'bash' as const,
              rollbackScript: null,
              timeoutSeconds: 5,
            },
          },
        },
      },
    };
    const legacy = setup(['t1'], 1);
    // Act
    await start(pinned);
    await start(legacy);
    // Assess
    const [command] = await pinned.commands.listByDeployment(pinned.deployment.id);
    expect([command?.script, command?.interpreter, command?.timeoutSeconds]).toEqual(['echo pinned', 'bash', 5]);
    const [old] = await legacy.commands.listByDeployment(legacy.deployment.id);
    expect(old?.script).toBe('echo hi');
  });

  it('a plan without pins reads the catalog on a pass that starts something, each version once, and only then', async () => {
    // Prepare: two targets, one action version
    const s = setup(['t1', 't2'], 1, { targetMode: 'parallel' });
    const reads: string[] = [];
    const find = s.deps.scripts.find;
    const deps: EngineDeps = {
      ...s.deps,
      scripts: { find: async (id, version) => (reads.push(`${id}@${version}`), find(id, version)) },
    };
    await s.orchestration.start(s.deployment);
    // Act
    await advance(deps, s.deployment.id);
    const starting = [...reads];
    await advance(deps, s.deployment.id);
    // Assess
    expect(await states(s)).toEqual(['running', 'running']);
    expect(starting).toHaveLength(1);
    expect(reads).toHaveLength(1);
  });

  it('fails a step whose version the pinned plan does not hold, instead of asking the catalog', async () => {
    const s = setup(['t1'], 1);
    const unpinned = { ...s, deployment: { ...s.deployment, plan: { ...s.deployment.plan, scripts: {} } } };
    await start(unpinned);
    expect(await states(unpinned)).toEqual(['failed']);
  });
});
