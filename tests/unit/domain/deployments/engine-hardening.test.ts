// Nothing stuck, nothing lost, on fakes: poisoned deployments are failed after N passes failing the same way, the
// ceiling applies without a deployment timeout, terminal side effects go through the outbox, the sweep re-does
// what was lost, and queued work is checked again when it starts.
import { describe, expect, it } from 'vitest';
import { cancelDeployment } from '../../../../domain/deployments/cancel.js';
import {
  dispatchPending,
  INACTIVE_USER_MESSAGE,
  recheckRequest,
  type DispatchDeps,
} from '../../../../domain/deployments/dispatch.js';
import { advance, gaveUpMessage, type EngineDeps } from '../../../../domain/deployments/engine.js';
import { owedBy, settleOutbox } from '../../../../domain/deployments/outbox.js';
import { sweep } from '../../../../domain/deployments/sweep.js';
import type { Deployment, PendingRequest, Plan } from '../../../../domain/deployments/types.js';
import type { Caller } from '../../../../domain/identity/types.js';
import type { Freeze } from '../../../../domain/tenancy/types.js';
import { aDeployment, aDraft, aPendingRequest, deploymentsFakes } from '../../../fakes/deployments.js';
import { noAgentChannel } from '../../../../domain/targets/agent-dispatch.js';
import { FakeCommandRepository } from '../../../fakes/targets.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

const setup = (options: { maxFailedPasses?: number; maxDeploymentSeconds?: number; transient?: boolean } = {}) => {
  const fakes = deploymentsFakes(1);
  const commands = new FakeCommandRepository();
  const wakes: { id: string; check: boolean; delay: number | undefined }[] = [];
  const deps: EngineDeps = {
    deployments: fakes.deployments,
    orchestration: fakes.orchestration,
    dispatch: fakes.dispatch,
    commands,
    agents: noAgentChannel(commands),
    targets: {
      getMany: async (ids) =>
        ids.map((id) => ({
          id,
          shortId: id,
          name: id,
          hostname: id,
          os: 'linux',
          arch: 'x64',
          agentVersion: '1',
          tags: [],
          tenantId: null,
          environmentId: null,
          agentTokenHash: 'h',
          lastHeartbeatAt: fakes.clock.now().toISOString(),
          createdAt: '',
          updatedAt: '',
        })),
    },
    scripts: {
      find: async () => ({ script: 'sleep 600', interpreter: 'sh', rollbackScript: null, timeoutSeconds: null }),
    },
    cipher: { encrypt: (v) => v, decrypt: (v) => v },
    engine: { wake: async (id, o) => void wakes.push({ id, check: o?.check === true, delay: o?.delaySeconds }) },
    clock: fakes.clock,
    limits: {
      maxFailedPasses: options.maxFailedPasses ?? 5,
      maxDeploymentSeconds: options.maxDeploymentSeconds ?? 604_800,
    },
    isTransient: () => options.transient === true,
  };
  return { ...fakes, commands, wakes, deps };
};

/** A deployment holding instance-1, stored through the orchestration (as a create does). */
const started = async (s: ReturnType<typeof setup>, overrides: Partial<Deployment> = {}) => {
  await s.orchestration.start(aDeployment(overrides));
  return (await s.deployments.get(aDeployment().id))!;
};
/** A plan whose steps cannot be read: every pass throws a TypeError. */
const corrupt = (s: ReturnType<typeof setup>, d: Deployment) =>
  s.deployments.put({ ...d, plan: { ...d.plan, steps: null } as unknown as Plan });

describe('poison never holds capacity', () => {
  it('fails the deployment on the 5th pass failing the same way: message, instance freed, commands stopped, dispatcher woken', async () => {
    // Prepare
    const s = setup();
    const d = await started(s);
    await advance(s.deps, d.id); // the first step starts: a command is queued
    const running = (await s.deployments.get(d.id))!;
    corrupt(s, running);
    // Act
    for (let pass = 1; pass <= 4; pass += 1) await expect(advance(s.deps, d.id)).rejects.toThrow(TypeError);
    const beforeLast = await s.deployments.get(d.id);
    await advance(s.deps, d.id); // the 5th: consumed, not thrown
    // Assess
    expect(beforeLast?.passFailures).toEqual({ count: 4, kind: 'TypeError' });
    const failed = (await s.deployments.get(d.id))!;
    expect(failed).toMatchObject({ state: 'failed', errorMessage: gaveUpMessage(5), instanceId: null });
    expect(failed.passFailures).toBeUndefined();
    expect(failed.errorMessage).not.toMatch(/TypeError|\n\s+at |null|Cannot read/);
    expect(s.orchestration.held.size).toBe(0);
    expect([...s.commands.commands.values()].map((c) => c.status)).toEqual(['cancelled']);
    expect(s.dispatch.reasons.some((r) => r.includes(d.id))).toBe(true);
    expect(s.orchestration.owed.size).toBe(0);
  });

  it('counts only failures of the same kind in a row, and a pass that succeeds clears the count', async () => {
    const s = setup({ maxFailedPasses: 2 });
    const d = await started(s);
    // One TypeError, then a pass that succeeds: the count is cleared.
    corrupt(s, d);
    await expect(advance(s.deps, d.id)).rejects.toThrow();
    s.deployments.put({ ...(await s.deployments.get(d.id))!, plan: d.plan });
    await advance(s.deps, d.id);
    expect((await s.deployments.get(d.id))?.passFailures).toBeUndefined();
    // A TypeError, then another kind: the count starts again at 1.
    corrupt(s, (await s.deployments.get(d.id))!);
    await expect(advance(s.deps, d.id)).rejects.toThrow();
    expect(await s.deployments.recordFailedPass(d.id, 'RangeError')).toBe(1);
    expect((await s.deployments.get(d.id))?.state).toBe('running');
  });

  it('never counts a transient failure (throttling): it is retried as long as it takes', async () => {
    const s = setup({ maxFailedPasses: 1, transient: true });
    const d = await started(s);
    corrupt(s, d);
    for (let pass = 0; pass < 3; pass += 1) await expect(advance(s.deps, d.id)).rejects.toThrow();
    const after = await s.deployments.get(d.id);
    expect([after?.state, after?.passFailures]).toEqual(['running', undefined]);
  });

  it('a deployment without a deployment timeout meets the ceiling: failed, saying which limit applied, instance freed', async () => {
    const s = setup({ maxDeploymentSeconds: 5 });
    const d = await started(s);
    await advance(s.deps, d.id);
    s.clock.advance(4_000);
    await advance(s.deps, d.id);
    expect((await s.deployments.get(d.id))?.state).toBe('running');
    s.clock.advance(1_000);
    await advance(s.deps, d.id);
    const done = (await s.deployments.get(d.id))!;
    expect(done.state).toBe('failed');
    expect(done.errorMessage).toContain("reached the service's ceiling of 5 s (DEPLOYMENT_MAX_SECONDS");
    expect(done.plan.steps[0]).toMatchObject({ state: 'failed', exitCode: 124 });
    expect(s.orchestration.held.size).toBe(0);
  });

  it('a deployment timeout of its own still wins over the ceiling', async () => {
    const s = setup({ maxDeploymentSeconds: 5 });
    const d = await started(s, { config: { ...aDeployment().config, deploymentTimeoutSeconds: 60 } });
    await advance(s.deps, d.id);
    s.clock.advance(10_000);
    await advance(s.deps, d.id);
    expect((await s.deployments.get(d.id))?.state).toBe('running');
    s.clock.advance(50_000);
    await advance(s.deps, d.id);
    expect((await s.deployments.get(d.id))?.errorMessage).toBe(
      'The deployment timed out after 60 s; running commands were stopped.',
    );
  });

  it('a second periodic check chain ends itself; the first goes on', async () => {
    const s = setup();
    const d = await started(s);
    await advance(s.deps, d.id, { check: true });
    s.clock.advance(2_000);
    await advance(s.deps, d.id, { check: true }); // a second chain, 2 s behind the first
    expect(s.wakes.filter((w) => w.check)).toHaveLength(1);
    s.clock.advance(8_000);
    await advance(s.deps, d.id, { check: true });
    expect(s.wakes.filter((w) => w.check)).toHaveLength(2);
  });
});

describe('the outbox', () => {
  const admin: Caller = {
    kind: 'user',
    userId: 'u1',
    tenantId: null,
    roles: ['admin'],
    permissions: new Set(['deployments:cancel']),
  };

  it('names what an end owes: cancel notices unless it succeeded, the wake-up, the final event', () => {
    const d = aDeployment();
    const ok = owedBy(d, { ...d, state: 'success', completedAt: '2026-11-22T10:05:00.000Z' });
    const failed = owedBy(d, { ...d, state: 'failed', completedAt: '2026-11-22T10:05:00.000Z', errorMessage: 'boom' });
    expect(ok).toEqual({
      deploymentId: d.id,
      tenantId: d.tenantId,
      at: '2026-11-22T10:05:00.000Z',
      cancelCommands: false,
      wakeDispatcher: true,
      finalEvent: { oldState: 'running', newState: 'success', message: 'All steps completed.' },
    });
    expect(failed).toMatchObject({ cancelCommands: true, finalEvent: { newState: 'failed', message: 'boom' } });
  });

  it('a cancel whose side effects fail keeps its entry; the retry does them and removes it', async () => {
    // Prepare
    const s = setup();
    const d = await started(s);
    await advance(s.deps, d.id);
    const failing = {
      wake: async () => {
        throw new Error('the process died');
      },
    };
    // Act
    await expect(
      cancelDeployment({ ...s.deps, events: undefined, dispatch: failing }, admin, d.id, undefined),
    ).rejects.toThrow('the process died');
    const left = [...s.orchestration.owed.values()];
    await advance(s.deps, d.id); // a retried pass of the (now cancelled) deployment
    // Assess
    expect((await s.deployments.get(d.id))?.state).toBe('cancelled');
    expect(left).toHaveLength(1);
    expect(s.orchestration.owed.size).toBe(0);
    expect(s.dispatch.reasons).toHaveLength(1);
  });

  it('settling twice is harmless: the final event is appended once', async () => {
    const s = setup();
    const store = new FakeDeploymentEventStore();
    const entry = owedBy(aDeployment(), {
      ...aDeployment(),
      state: 'failed',
      completedAt: '2026-11-22T10:05:00.000Z',
      errorMessage: 'x',
    });
    await settleOutbox({ ...s.deps, events: store }, entry);
    await settleOutbox({ ...s.deps, events: store }, entry);
    expect((store.events.get(aDeployment().id) ?? []).map((e) => e.event)).toEqual([
      {
        type: 'state_change',
        deployment_id: aDeployment().id,
        old_state: 'running',
        new_state: 'failed',
        message: 'x',
      },
    ]);
  });
});

describe('the sweep', () => {
  it('settles old outbox entries, re-arms a lost check once, and wakes the dispatcher when requests wait and an instance is free', async () => {
    // Prepare
    const s = setup();
    const d = await started(s);
    await s.orchestration.finish(
      d,
      { ...d, state: 'failed', completedAt: s.clock.now().toISOString(), revision: d.revision + 1 },
      owedBy(d, { ...d, state: 'failed', completedAt: s.clock.now().toISOString() }),
    );
    s.pending.put(aPendingRequest());
    const young = await sweep({ ...s.deps, pending: s.pending });
    s.clock.advance(6_000);
    // Act
    const report = await sweep({ ...s.deps, pending: s.pending });
    // Assess
    expect(young.settled).toEqual([]);
    expect(report.settled).toEqual([d.id]);
    expect(report.wokeDispatcher).toBe(true);
    expect(s.orchestration.owed.size).toBe(0);
  });

  it('gives a running deployment whose checks stopped a new chain, once', async () => {
    const s = setup();
    const d = await started(s);
    s.clock.advance(61_000);
    const first = await sweep({ ...s.deps, pending: s.pending });
    const second = await sweep({ ...s.deps, pending: s.pending });
    expect(first.rearmed).toEqual([d.id]);
    expect(second.rearmed).toEqual([]);
    expect(s.wakes).toEqual([{ id: d.id, check: true, delay: 10 }]);
  });
});

describe('queued work is re-checked when it starts', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  const freeze = (overrides: Partial<Freeze> = {}): Freeze => ({
    id: 'f1',
    shortId: 'f1',
    name: 'Year end',
    reason: null,
    startTime: '2026-11-22T09:00:00.000Z',
    endTime: '2027-01-03T00:00:00.000Z',
    tenantId: null,
    solutionId: null,
    environmentId: 'env-a',
    createdBy: 'u',
    createdAt: '',
    updatedAt: '',
    ...overrides,
  });
  const inEnv = (environmentId: string | null, overrides: Partial<PendingRequest> = {}) =>
    aPendingRequest({ draft: aDraft({ environmentId }), environmentId, ...overrides });

  it.each([
    ['an active user, no freeze', inEnv('env-b'), 'active', { kind: 'go' }],
    [
      'a freeze on its environment',
      inEnv('env-a'),
      'active',
      {
        kind: 'frozen',
        reason: "Deployment freeze 'Year end' is active until 2027-01-03T00:00:00+00:00",
        until: '2027-01-03T00:00:00+00:00',
      },
    ],
    [
      'a freeze, but an admin override at create',
      aPendingRequest({
        draft: aDraft({ environmentId: 'env-a', freezeOverride: { reason: 'hotfix', by: 'u', freezes: [] } }),
      }),
      'active',
      { kind: 'go' },
    ],
    ['a deactivated user', inEnv('env-b'), 'inactive', { kind: 'inactive_user' }],
    ['a locked user', inEnv('env-b'), 'locked', { kind: 'inactive_user' }],
    ['a deleted user', inEnv('env-b'), undefined, { kind: 'inactive_user' }],
  ])('%s', (_, request, status, expected) => {
    expect(recheckRequest(request, [freeze()], status, now)).toEqual(expected);
  });

  it('a frozen request waits with its reason while one behind it dispatches; a request of an inactive user fails', async () => {
    // Prepare
    const s = setup();
    const statuses: Record<string, string> = { active: 'active', gone: 'inactive' };
    const deps: DispatchDeps = {
      ...s.deps,
      pending: s.pending,
      ids: { next: async () => ({ id: 'd-new', shortId: 'dn' }) },
      uuids: { uuid: () => 'x' },
      settings: { maxRetries: 1 },
      recheck: {
        freezes: { listEndingAfter: async () => [freeze()] },
        users: { get: async (id) => (statuses[id] === undefined ? undefined : ({ status: statuses[id] } as never)) },
      },
    };
    s.pending.put(inEnv('env-a', { id: 'frozen', triggeredBy: 'active', queuedAt: '2026-11-22T09:00:00.000Z' }));
    s.pending.put(inEnv('env-b', { id: 'quitter', triggeredBy: 'gone', queuedAt: '2026-11-22T09:01:00.000Z' }));
    s.pending.put(inEnv('env-b', { id: 'free', triggeredBy: 'active', queuedAt: '2026-11-22T09:02:00.000Z' }));
    // Act
    const report = await dispatchPending(deps);
    // Assess
    expect(report.dispatched.map((r) => r.requestId)).toEqual(['free']);
    expect(report.failed).toEqual(['quitter']);
    expect(await s.pending.get('frozen')).toMatchObject({
      status: 'pending',
      waitingReason: "Deployment freeze 'Year end' is active until 2027-01-03T00:00:00+00:00",
      waitingUntil: '2027-01-03T00:00:00+00:00',
    });
    expect(await s.pending.get('quitter')).toMatchObject({ status: 'failed', errorMessage: INACTIVE_USER_MESSAGE });
  });
});
