import { describe, expect, it } from 'vitest';
import { cancelDeployment } from '../../../../domain/deployments/cancel.js';
import { dispatchPending, type DispatchDeps } from '../../../../domain/deployments/dispatch.js';
import { startOrQueue } from '../../../../domain/deployments/start.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { enqueueCommand } from '../../../../domain/targets/commands.js';
import { aDraft, deploymentsFakes } from '../../../fakes/deployments.js';
import { fakeIds } from '../../../fakes/identity.js';
import { FakeCommandRepository } from '../../../fakes/targets.js';

const admin: Caller = {
  kind: 'user',
  userId: 'u1',
  tenantId: null,
  roles: ['admin'],
  permissions: new Set(['deployments:cancel']),
};

const setup = (capacity: number) => {
  const fakes = deploymentsFakes(capacity);
  let n = 0;
  const commands = new FakeCommandRepository();
  const deps: DispatchDeps = { ...fakes.deps, uuids: { uuid: () => `r-${(n += 1)}` }, settings: { maxRetries: 1 } };
  return { ...fakes, deps, commands, cancelDeps: { ...fakes.deps, commands } };
};
const withPriority = (priority: number) => aDraft({ config: { ...aDraft().config, priority } });

describe('startOrQueue', () => {
  it('starts on a free instance: running, progress 0, all steps counted', async () => {
    const { deps } = setup(1);
    const outcome = await startOrQueue(deps, aDraft());
    expect(outcome).toMatchObject({
      kind: 'started',
      deployment: {
        state: 'running',
        progress: 0,
        totalSteps: 1,
        instanceId: 'instance-1',
        startedAt: '2026-11-22T10:00:00.000Z',
      },
    });
  });

  it('queues when no instance is free, wakes the dispatcher and tells the position', async () => {
    const { deps, dispatch } = setup(0);
    const first = await startOrQueue(deps, aDraft());
    const urgent = await startOrQueue(deps, withPriority(10));
    expect(first).toMatchObject({ kind: 'queued', position: 1, request: { status: 'pending', priority: 0 } });
    expect(urgent).toMatchObject({ kind: 'queued', position: 1 });
    expect(dispatch.reasons).toHaveLength(2);
  });
});

describe('dispatchPending', () => {
  it('does nothing without a free instance, then starts the highest priority, oldest request first', async () => {
    const { deps, clock, orchestration, pending } = setup(0);
    for (const p of [0, 5, 5]) {
      await startOrQueue(deps, withPriority(p));
      clock.advance(1000);
    }
    expect(await dispatchPending(deps)).toEqual({ dispatched: [], failed: [] });
    await orchestration.setCapacity(2);
    const report = await dispatchPending(deps);
    expect(report.dispatched.map((d) => d.requestId)).toEqual(['r-2', 'r-3']);
    expect(await pending.get('r-2')).toMatchObject({
      status: 'dispatched',
      dispatchedToInstanceId: 'instance-1',
      dispatchedAt: expect.any(String),
    });
    expect((await pending.get('r-1'))?.status).toBe('pending');
  });

  it('records a failed start, retries it, and fails the request past the retry limit', async () => {
    const { deps, pending, orchestration, deployments } = setup(1);
    await startOrQueue(deps, aDraft()); // takes the only instance
    await startOrQueue(deps, aDraft());
    const broken = { ...deps, ids: { next: async () => Promise.reject(new Error('counter unavailable')) } };
    const [running] = await deployments.listAll();
    await orchestration.finish(running!, { ...running!, state: 'success', revision: running!.revision + 1 });
    await expect(dispatchPending(broken)).rejects.toThrow('counter unavailable');
    expect(await pending.get('r-1')).toMatchObject({
      status: 'pending',
      retryCount: 1,
      errorMessage: 'Dispatch failed: counter unavailable',
      lastRetryAt: expect.any(String),
    });
    expect(await dispatchPending(broken)).toEqual({ dispatched: [], failed: ['r-1'] });
    expect(await pending.get('r-1')).toMatchObject({ status: 'failed', retryCount: 2 });
    expect((await dispatchPending({ ...deps, ids: fakeIds() })).dispatched).toEqual([]);
  });

  it('puts a request stuck in processing for over a minute back in the queue', async () => {
    const { deps, pending, clock } = setup(0);
    await startOrQueue(deps, aDraft());
    await pending.claim((await pending.get('r-1'))!, clock.now());
    clock.advance(61_000);
    await dispatchPending(deps);
    expect((await pending.get('r-1'))?.status).toBe('pending');
  });
});

describe('cancelDeployment', () => {
  it('cancels a running deployment: reason kept, plan null, instance freed, commands stopped, dispatcher woken', async () => {
    // Prepare
    const { deps, cancelDeps, commands, orchestration, dispatch, clock } = setup(1);
    const started = await startOrQueue(deps, aDraft());
    if (started.kind !== 'started') throw new Error('expected a start');
    const command = await enqueueCommand(
      { commands, ids: fakeIds(), clock },
      {
        targetId: 't1',
        deploymentId: started.deployment.id,
        stepId: 's1',
        attempt: 1,
        action: { id: 'a', slug: 'a', version: '1.0.0' },
        script: 'sleep 60',
        interpreter: 'sh',
        variables: {},
        secretVariables: [],
        timeoutSeconds: null,
      },
    );
    clock.advance(5000);
    // Act
    const answer = await cancelDeployment(cancelDeps, admin, started.deployment.shortId, 'wrong branch');
    // Assess
    expect(answer).toMatchObject({
      state: 'cancelled',
      plan: null,
      cancel_reason: 'wrong branch',
      completed_at: '2026-11-22T10:00:05.000Z',
      duration_ms: 5000,
    });
    expect((await orchestration.holders()).size).toBe(0);
    expect((await commands.get(command.id))?.status).toBe('cancelled');
    expect(dispatch.reasons.at(-1)).toMatch(/freed/);
    await expect(cancelDeployment(cancelDeps, admin, started.deployment.id, undefined)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(
      cancelDeployment(cancelDeps, { ...admin, tenantId: 'other' }, started.deployment.id, undefined),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('business metrics', () => {
  it('counts each start with how long its request waited, and a cancel as a final state', async () => {
    // Prepare
    const told: string[] = [];
    const metrics = {
      deploymentStarted: (waitedMs: number) => told.push(`started ${waitedMs}`),
      deploymentFinished: (state: string) => told.push(`finished ${state}`),
      agentConnected: () => told.push('agent'),
    };
    const { deps, clock, orchestration, deployments, cancelDeps } = setup(1);
    const counted = { ...deps, metrics };

    // Act: one starts at once, one waits 5 s for the instance, then is cancelled
    await startOrQueue(counted, aDraft());
    await startOrQueue(counted, aDraft());
    const [first] = await deployments.listAll();
    await orchestration.finish(first!, { ...first!, state: 'success', revision: first!.revision + 1 });
    clock.advance(5000);
    const report = await dispatchPending(counted);
    await cancelDeployment({ ...cancelDeps, metrics }, admin, report.dispatched[0]!.deploymentId, 'not today');

    // Assess
    expect(told).toEqual(['started 0', 'started 5000', 'finished cancelled']);
  });
});
