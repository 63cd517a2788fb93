// Terminal events once (issue 34): every transition appends its events exactly once whoever observes it first (the
// engine pass that wrote it, a retried pass, the sweep, a cancel), and event seqs and times move forward together.
// On fakes: the event store's keyed append is atomic like the adapter's conditional transaction.
import { describe, expect, it } from 'vitest';
import { cancelDeployment } from '../../../../domain/deployments/cancel.js';
import { advance, type EngineDeps } from '../../../../domain/deployments/engine.js';
import {
  forwardInTime,
  isTerminalEvent,
  stateEventKey,
  ensureStoredEnd,
  transitionGroups,
  type KeyedEventAppender,
  type NewEvent,
} from '../../../../domain/deployments/events.js';
import { deploymentLogHistory } from '../../../../domain/deployments/log-history.js';
import { settleOutbox } from '../../../../domain/deployments/outbox.js';
import { OUTBOX_GRACE_MS, sweep } from '../../../../domain/deployments/sweep.js';
import type { Deployment } from '../../../../domain/deployments/types.js';
import type { Caller } from '../../../../domain/identity/types.js';
import { aDeployment, deploymentsFakes } from '../../../fakes/deployments.js';
import { noAgentChannel } from '../../../../domain/targets/agent-dispatch.js';
import { FakeCommandRepository } from '../../../fakes/targets.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

const progressEvent = {
  type: 'progress',
  deployment_id: 'd',
  progress: 1,
  completed_steps: 1,
  total_steps: 1,
  message: 'analysis',
} as const;

const admin = { userId: 'u-admin', tenantId: null, permissions: new Set(['*']) } as unknown as Caller;

/** An engine whose passes publish to a fake event store; `dieAfterWrite` makes a publish throw. */
const setup = () => {
  const fakes = deploymentsFakes(1);
  const commands = new FakeCommandRepository();
  const store = new FakeDeploymentEventStore();
  const control = { dieAfterWrite: false, beforePublish: async () => {} };
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
    engine: { wake: async () => {} },
    clock: fakes.clock,
    // The event store as the engine sees it: `dieAfterWrite` makes the pass's append throw, `beforePublish` runs first.
    events: {
      appendOnce: async (id, groups) => {
        if (control.dieAfterWrite) throw new Error('kill -9 between the write and its events');
        await control.beforePublish();
        return store.appendOnce(id, groups);
      },
    },
    limits: { maxFailedPasses: 5, maxDeploymentSeconds: 5 },
  };
  return { ...fakes, commands, store, control, deps };
};

type Setup = ReturnType<typeof setup>;

const started = async (s: Setup): Promise<Deployment> => {
  await s.orchestration.start(aDeployment({ createdAt: s.clock.now().toISOString() }));
  return (await s.deployments.get(aDeployment().id))!;
};

const history = (s: Setup) => s.store.events.get(aDeployment().id) ?? [];
const terminals = (s: Setup) => history(s).filter((e) => isTerminalEvent(e.event));

/** Seq order is time order: each event's time is at least the one before it. */
const expectTimeFollowsSeq = (s: Setup) => {
  const events = history(s);
  events.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    if (i > 0) expect(e.at >= events[i - 1]!.at).toBe(true);
  });
};

/** A started deployment whose first step runs: the next pass past 5 s fails it (the ceiling). */
const runningPastItsCeiling = async (s: Setup) => {
  const d = await started(s);
  await advance(s.deps, d.id);
  s.clock.advance(6_000);
  return d;
};

describe('a transition appends its events once, whoever observes it first', () => {
  it('kill -9 after the terminal write: a retried pass and the sweep racing append one terminal state_change', async () => {
    // Prepare
    const s = setup();
    const d = await runningPastItsCeiling(s);
    s.control.dieAfterWrite = true;
    await expect(advance(s.deps, d.id)).rejects.toThrow('kill -9');
    s.control.dieAfterWrite = false;
    expect((await s.deployments.get(d.id))?.state).toBe('failed');
    expect(terminals(s)).toHaveLength(0);
    s.clock.advance(OUTBOX_GRACE_MS + 1_000);
    // Act: the restarted stack's pass and sweep observe the same end at once, then once more each
    await Promise.all([advance(s.deps, d.id), sweep({ ...s.deps, pending: s.pending })]);
    await Promise.all([advance(s.deps, d.id), sweep({ ...s.deps, pending: s.pending })]);
    // Assess
    expect(terminals(s)).toHaveLength(1);
    expect(terminals(s)[0]?.event).toMatchObject({ old_state: 'running', new_state: 'failed' });
    expect(s.orchestration.owed.size).toBe(0);
    expectTimeFollowsSeq(s);
  });

  it('the sweep settling while the pass that wrote the end publishes: one terminal event, the pass adds only its steps', async () => {
    // Prepare
    const s = setup();
    const d = await runningPastItsCeiling(s);
    // The sweep observes the end first (its entry is dated at the transition; the pass publishes later)
    s.control.beforePublish = async () => {
      s.control.beforePublish = async () => {};
      s.clock.advance(OUTBOX_GRACE_MS + 1_000);
      const entry = [...s.orchestration.owed.values()][0]!;
      await settleOutbox({ ...s.deps }, entry);
    };
    // Act
    await advance(s.deps, d.id);
    // Assess
    expect(terminals(s)).toHaveLength(1);
    expect(history(s).map((e) => e.event.type)).toEqual([
      'state_change', // pending -> running (the first pass)
      'step_update',
      'progress',
      'state_change', // the end, by the sweep
      'step_update', // the failing pass's own events, after it
      'progress',
    ]);
    expectTimeFollowsSeq(s);
  });

  it('a cancel and the sweep settling its entry at once append one cancelled state_change', async () => {
    // Prepare
    const s = setup();
    const d = await started(s);
    await advance(s.deps, d.id);
    // Act
    await Promise.all([
      cancelDeployment({ ...s.deps }, admin, d.id, 'stop'),
      (async () => {
        s.clock.advance(OUTBOX_GRACE_MS + 1_000);
        await sweep({ ...s.deps, pending: s.pending });
      })(),
      advance(s.deps, d.id),
    ]);
    await sweep({ ...s.deps, pending: s.pending });
    // Assess
    expect(terminals(s).map((e) => e.event)).toEqual([
      expect.objectContaining({ type: 'state_change', new_state: 'cancelled' }),
    ]);
    expectTimeFollowsSeq(s);
  });

  it('two engine passes publishing the same transition (a duplicate wake-up) append its events once', async () => {
    // Prepare
    const s = setup();
    const d = await runningPastItsCeiling(s);
    let published: Parameters<KeyedEventAppender['appendOnce']> | undefined;
    // Act: the pass's publish runs twice side by side (the same transition seen by two observers)
    const deps: EngineDeps = {
      ...s.deps,
      events: {
        appendOnce: async (...args) => {
          if (published !== undefined) return s.store.appendOnce(...args);
          published = args;
          return [];
        },
      },
    };
    await advance(deps, d.id);
    await Promise.all([s.store.appendOnce(...published!), s.store.appendOnce(...published!)]);
    // Assess
    expect(terminals(s)).toHaveLength(1);
    expect(history(s).filter((e) => e.event.type === 'progress')).toHaveLength(2); // the first pass's, and this one's
  });
});

describe('transitionGroups', () => {
  const at = '2026-11-22T10:00:00.000Z';
  const change = (from: 'pending' | 'running', to: 'running' | 'failed'): NewEvent => ({
    at,
    event: { type: 'state_change', deployment_id: 'd', old_state: from, new_state: to, message: '' },
  });
  const progress: NewEvent = {
    at,
    event: { type: 'progress', deployment_id: 'd', progress: 0, completed_steps: 0, total_steps: 1, message: '' },
  };

  it('keys each state_change by the state entered and the events between by the revision written, order kept', () => {
    const groups = transitionGroups(7, [change('pending', 'running'), progress, progress, change('running', 'failed')]);
    expect(groups.map((g) => [g.key, g.events.length])).toEqual([
      [stateEventKey('running'), 1],
      ['rev#7#1', 2],
      [stateEventKey('failed'), 1],
    ]);
  });

  it('cuts a long run of events into groups that fit one transaction', () => {
    const groups = transitionGroups(
      2,
      Array.from({ length: 200 }, () => progress),
    );
    expect(groups.map((g) => g.events.length)).toEqual([90, 90, 20]);
    expect(new Set(groups.map((g) => g.key)).size).toBe(3);
  });
});

describe('the log readers observe an end as the engine does (ensureStoredEnd)', () => {
  /** A deployment the kill -9 left failed with its end unpublished (the pass died after its write). */
  const endedUnpublished = async () => {
    const s = setup();
    const d = await runningPastItsCeiling(s);
    s.control.dieAfterWrite = true;
    await expect(advance(s.deps, d.id)).rejects.toThrow('kill -9');
    s.control.dieAfterWrite = false;
    expect(terminals(s)).toHaveLength(0);
    return { s, ended: (await s.deployments.get(d.id))! };
  };

  it('a reader first: it appends the end, keyed, and the restarted pass and the sweep add no second one', async () => {
    // Prepare
    const { s, ended } = await endedUnpublished();
    // Act: two readers at once (a stream and a history), then the pass and the sweep settle the entry
    const [a, b] = await Promise.all([ensureStoredEnd(s.store, ended), ensureStoredEnd(s.store, ended)]);
    s.clock.advance(OUTBOX_GRACE_MS + 1_000);
    await Promise.all([advance(s.deps, ended.id), sweep({ ...s.deps, pending: s.pending })]);
    // Assess
    expect(terminals(s)).toHaveLength(1);
    expect([a?.seq, b?.seq]).toEqual([terminals(s)[0]!.seq, terminals(s)[0]!.seq]);
    expect([a?.appended, b?.appended].filter((e) => e !== undefined)).toHaveLength(1);
    expect(terminals(s)[0]?.event).toMatchObject({ old_state: 'running', new_state: 'failed' });
    expect(s.orchestration.owed.size).toBe(0);
    expectTimeFollowsSeq(s);
  });

  it('the engine first, its end followed by more events than any look-back: the reader finds it, appends nothing', async () => {
    // Prepare: the sweep publishes the end, then 30 analysis lines follow it
    const { s, ended } = await endedUnpublished();
    s.clock.advance(OUTBOX_GRACE_MS + 1_000);
    await sweep({ ...s.deps, pending: s.pending });
    const end = terminals(s)[0]!;
    await s.store.append(
      ended.id,
      Array.from({ length: 30 }, () => ({ at: s.clock.now().toISOString(), event: progressEvent })),
    );
    const stored = history(s).length;
    // Act
    const found = await ensureStoredEnd(s.store, ended);
    const page = await deploymentLogHistory({ ...s, events: s.store }, admin, ended.id, { offset: 20, limit: 100 });
    // Assess
    expect(found).toEqual({ seq: end.seq, appended: undefined });
    expect(page.filter((e) => e.event_type === 'state_change')).toHaveLength(0); // the end is on an earlier page
    expect(history(s)).toHaveLength(stored);
    expect(terminals(s)).toHaveLength(1);
  });

  it('the history appends a missing end only after the grace, and once however often it is read', async () => {
    // Prepare
    const { s, ended } = await endedUnpublished();
    const deps = { deployments: s.deployments, events: s.store, clock: s.clock };
    // Act + Assess: within the grace the engine is left to publish it
    const early = await deploymentLogHistory(deps, admin, ended.id, { offset: 0, limit: 100 });
    expect(early.filter((e) => e.event_type === 'state_change' && e.metadata?.['new_state'] === 'failed')).toEqual([]);
    expect(terminals(s)).toHaveLength(0);
    s.clock.advance(10_000);
    const reads = await Promise.all(
      [0, 1, 2].map(() => deploymentLogHistory(deps, admin, ended.id, { offset: 0, limit: 100 })),
    );
    for (const read of reads)
      expect(
        read.filter((e) => e.event_type === 'state_change' && e.metadata?.['new_state'] === 'failed'),
      ).toHaveLength(1);
    expect(terminals(s)).toHaveLength(1);
    expect(await ensureStoredEnd(s.store, { ...ended, state: 'running' })).toBeUndefined();
    expectTimeFollowsSeq(s);
  });
});

describe('forwardInTime', () => {
  it('dates no event before the one it follows', () => {
    const dated = forwardInTime('2026-11-22T10:00:00.125Z', [
      { at: '2026-11-22T10:00:00.000Z' },
      { at: '2026-11-22T10:00:00.200Z' },
      { at: '2026-11-22T10:00:00.100Z' },
    ]);
    expect(dated.map((e) => e.at)).toEqual([
      '2026-11-22T10:00:00.125Z',
      '2026-11-22T10:00:00.200Z',
      '2026-11-22T10:00:00.200Z',
    ]);
  });
});
