import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../fakes/clock.js';
import { aDeployment, FakeDeploymentRepository } from '../../../fakes/deployments.js';
import type { DeploymentEvent } from '../../../../domain/deployments/events.js';
import { followDeploymentLog, LOG_STREAM_TIMING } from '../../../../domain/streams/deployment-log.js';
import { backedOff, nextPollMs, type PollBackoff } from '../../../../domain/streams/poll-backoff.js';
import { followResourceChanges, RESOURCE_STREAM_TIMING } from '../../../../domain/streams/resource-changes.js';
import type { ResourceView } from '../../../../domain/streams/resource-sources.js';
import { FakeDeploymentEventStore } from '../../functions/streams/fake-event-store.js';

const BACKOFF: PollBackoff = { fastMs: 100, quietAfterMs: 2_000, maxMs: 1_000 };

const line = (message: string): DeploymentEvent => ({
  type: 'log',
  log: {
    timestamp: '2026-11-22T10:00:01.000Z',
    level: 'info',
    step_id: null,
    target_id: null,
    target_name: null,
    message,
    metadata: null,
  },
});

describe('nextPollMs', () => {
  it.each([
    ['fast while quiet for less than quietAfterMs', 100, 0, 100],
    ['fast just before the quiet threshold', 100, 1_999, 100],
    ['doubles once quiet long enough', 100, 2_000, 200],
    ['keeps doubling', 400, 3_000, 800],
    ['stops at the cap', 800, 4_000, 1_000],
    ['stays at the cap', 1_000, 60_000, 1_000],
    ['back to fast at once after a change', 1_000, 0, 100],
    ['never below fast, whatever the last wait', 10, 5_000, 100],
  ])('%s', (_label, lastWaitMs, quietForMs, expected) => {
    // Act / Assess
    expect(nextPollMs(BACKOFF, lastWaitMs, quietForMs)).toBe(expected);
  });

  it('says when a stream has backed off all the way', () => {
    expect([backedOff(BACKOFF, 800), backedOff(BACKOFF, 1_000)]).toEqual([false, true]);
  });
});

/** Runs a deployment's log stream for `maxMs` with a clock that jumps by each wait; records the waits. */
const runLog = async (
  maxMs: number,
  onWait: (elapsedMs: number, events: FakeDeploymentEventStore) => Promise<void>,
) => {
  const clock = new FakeClock(new Date('2026-11-22T10:10:00.000Z'));
  const deployments = new FakeDeploymentRepository();
  const deployment = deployments.put(aDeployment({ state: 'running' }));
  let deploymentReads = 0;
  const counted = Object.assign(Object.create(deployments) as FakeDeploymentRepository, {
    get: async (id: string) => ((deploymentReads += 1), deployments.get(id)),
  });
  const events = new FakeDeploymentEventStore();
  const started = clock.now().getTime();
  const waits: { atMs: number; ms: number }[] = [];
  const wait = async (ms: number) => {
    waits.push({ atMs: clock.now().getTime() - started, ms });
    clock.advance(ms);
    await onWait(clock.now().getTime() - started, events);
  };
  const sent: unknown[] = [];
  const timing = { ...LOG_STREAM_TIMING, maxMs };
  for await (const item of followDeploymentLog(
    { deployments: counted, events, clock },
    deployment,
    0,
    new AbortController().signal,
    timing,
    { wait, warn: () => undefined },
  ))
    sent.push(item);
  return { waits, storeReads: events.reads, deploymentReads, sent };
};

describe('followDeploymentLog backs off while the deployment is quiet', () => {
  it('reads the store every 100 ms for 10 s, then doubles the wait up to 500 ms, and re-reads the deployment every 10 s', async () => {
    // Act: a running deployment that writes nothing for a minute
    const { waits, storeReads, deploymentReads } = await runLog(60_000, async () => undefined);

    // Assess
    expect(waits.slice(0, 100).every((w) => w.ms === 100)).toBe(true);
    expect(waits.slice(100, 103).map((w) => w.ms)).toEqual([200, 400, 500]);
    expect(waits.slice(103).every((w) => w.ms === 500)).toBe(true);
    // 100 fast reads, 3 ramping, then two a second: about 200 reads a minute instead of 600
    expect(storeReads).toBeGreaterThan(190);
    expect(storeReads).toBeLessThan(215);
    // every 2 s until backed off (at ~10.7 s), then every 10 s: about 5 + 5
    expect(deploymentReads).toBeLessThanOrEqual(12);
    expect(deploymentReads).toBeGreaterThanOrEqual(8);
  });

  it('goes back to 100 ms on the first event after a quiet spell, and backs off again 10 s after the last one', async () => {
    // Act: quiet for 20 s, then a line at each read until 21 s, then quiet again
    const { waits, sent } = await runLog(40_000, async (elapsedMs, events) => {
      if (elapsedMs >= 20_000 && elapsedMs < 21_000) {
        const deploymentId = aDeployment().id;
        await events.append(deploymentId, [{ at: '2026-11-22T10:10:10.000Z', event: line(`at ${elapsedMs}`) }]);
      }
    });

    // Assess
    const firstAfter = waits.findIndex((w) => w.atMs >= 20_000);
    expect(waits[firstAfter]!.ms).toBe(100); // the read that found the first line: fast again at once
    const flowing = waits.filter((w) => w.atMs >= 20_000 && w.atMs < 30_800);
    expect(flowing.every((w) => w.ms === 100)).toBe(true); // fast while lines flow and for 10 s after the last (at ~20.9 s)
    expect(waits.filter((w) => w.atMs >= 33_000).every((w) => w.ms === 500)).toBe(true);
    expect(sent.filter((item) => JSON.stringify(item).includes('"log"')).length).toBeGreaterThanOrEqual(5);
  });
});

describe('followResourceChanges backs off while nothing changes', () => {
  it('looks every second for 10 s, then every 2 s, and every second again after a change', async () => {
    // Prepare: a feed whose record changes once, at 30 s
    const clock = new FakeClock(new Date('2026-11-22T10:10:00.000Z'));
    const started = clock.now().getTime();
    const waits: { atMs: number; ms: number }[] = [];
    const views = (version: number): ReadonlyMap<string, ResourceView> => new Map([['d1', { id: 'd1', version }]]);
    const elapsed = () => clock.now().getTime() - started;
    const feed = {
      resourceType: 'deployments' as const,
      initial: views(1),
      next: async () => views(elapsed() >= 30_000 ? 2 : 1),
      snapshot: false,
    };
    const wait = async (ms: number) => {
      waits.push({ atMs: elapsed(), ms });
      clock.advance(ms);
    };

    // Act
    const items: unknown[] = [];
    const timing = { ...RESOURCE_STREAM_TIMING, maxMs: 60_000 };
    for await (const item of followResourceChanges(clock, feed, new AbortController().signal, timing, {
      wait,
      warn: () => undefined,
    }))
      items.push(item);

    // Assess
    expect(waits.filter((w) => w.atMs < 10_000).every((w) => w.ms === 1_000)).toBe(true);
    expect(waits.filter((w) => w.atMs >= 12_000 && w.atMs < 30_000).every((w) => w.ms === 2_000)).toBe(true);
    const changeRead = waits.findIndex((w) => w.atMs >= 30_000);
    expect(waits[changeRead + 1]!.ms).toBe(1_000); // the look after the change: fast again
    expect(waits.filter((w) => w.atMs >= 42_000).every((w) => w.ms === 2_000)).toBe(true);
    expect(items.filter((item) => JSON.stringify(item).includes('"updated"'))).toHaveLength(1);
  });
});
