// The deployments list's summary set: read in full once, then kept current from the change feed (only what changed
// since the last look, read back LOOK_BACK_MS), read in full again after RELOAD_AFTER_MS or a flood of changes, and
// one look at a time with calls that arrive meanwhile sharing the next look.
import { describe, expect, it } from 'vitest';
import type { DeploymentSummary } from '../../../../domain/deployments/ports.js';
import type { DeploymentState } from '../../../../domain/deployments/types.js';
import type { ChangedRecord } from '../../../../domain/shared/ports.js';
import {
  DeploymentSummarySet,
  LOOK_BACK_MS,
  MAX_CHANGED,
  RELOAD_AFTER_MS,
  type SummarySources,
} from '../../../../infra/dynamodb/deployment-summaries.js';

const summary = (id: string, state: DeploymentState = 'running'): DeploymentSummary => ({
  id,
  tenantId: null,
  state,
  environmentId: null,
  sourceType: 'action',
  triggeredBy: 'c0000000-0000-4000-8000-000000000001',
  createdAt: '2026-11-28T10:00:00.000Z',
});

/** A table in memory: its summaries, its feed (one entry per deployment at its last write) and what was asked. */
const aTable = () => {
  let clock = Date.parse('2026-11-28T12:00:00.000Z');
  const stored = new Map<string, DeploymentSummary>();
  const feed = new Map<string, string>();
  const asked = { all: 0, since: [] as string[], max: [] as number[], of: [] as string[][] };
  const write = (s: DeploymentSummary) => {
    stored.set(s.id, s);
    feed.set(s.id, new Date(clock).toISOString());
  };
  const sources: SummarySources = {
    all: async () => {
      asked.all += 1;
      return [...stored.values()];
    },
    changedSince: async (from, max) => {
      asked.since.push(from);
      asked.max.push(max);
      return [...feed]
        .filter(([, at]) => at >= from)
        .sort(([, a], [, b]) => a.localeCompare(b))
        .slice(0, max)
        .map(([id, at]): ChangedRecord => ({ id, at, tenantId: null }));
    },
    summariesOf: async (ids) => {
      asked.of.push([...ids]);
      return ids.flatMap((id) => stored.get(id) ?? []);
    },
  };
  // the set calls through this object, so a test may swap one source for a while
  const set = new DeploymentSummarySet(
    {
      all: () => sources.all(),
      changedSince: (from, max) => sources.changedSince(from, max),
      summariesOf: (ids) => sources.summariesOf(ids),
    },
    () => clock,
  );
  const states = async () =>
    Object.fromEntries((await set.current()).map((s) => [s.id, s.state])) as Record<string, string>;
  return { set, sources, write, asked, states, tick: (ms: number) => (clock += ms) };
};

describe('the deployments list summary set', () => {
  it('reads in full once, then only what the feed lists as changed since its last look', async () => {
    const t = aTable();
    t.write(summary('a'));
    t.write(summary('b'));
    expect(await t.states()).toEqual({ a: 'running', b: 'running' });
    expect(t.asked.all).toBe(1);

    t.tick(1_000);
    t.write(summary('a', 'success'));
    t.write(summary('c', 'queued'));
    t.tick(1_000);
    expect(await t.states()).toEqual({ a: 'success', b: 'running', c: 'queued' });
    expect(t.asked.all).toBe(1);
    // the look reads back LOOK_BACK_MS before the previous one
    expect(t.asked.since.at(-1)).toBe(new Date(Date.parse('2026-11-28T12:00:00.000Z') - LOOK_BACK_MS).toISOString());
    // a, b (written within the look-back of the full read) and c: each read once
    expect(t.asked.of.flat().sort()).toEqual(['a', 'b', 'c']);

    t.tick(1_000);
    expect(await t.states()).toEqual({ a: 'success', b: 'running', c: 'queued' });
    // nothing new: the entries still inside the look-back are not read again
    expect(t.asked.of.flat().sort()).toEqual(['a', 'b', 'c']);
  });

  it('reads in full again after RELOAD_AFTER_MS, and when more than MAX_CHANGED changed', async () => {
    const t = aTable();
    t.write(summary('a'));
    await t.set.current();
    t.tick(RELOAD_AFTER_MS);
    await t.set.current();
    expect(t.asked.all).toBe(2);

    t.tick(10_000);
    for (let i = 0; i <= MAX_CHANGED; i += 1) t.write(summary(`n${i}`));
    t.tick(1_000);
    expect((await t.set.current()).length).toBe(MAX_CHANGED + 2);
    expect(t.asked.all).toBe(3);
    // the flood's look asked the feed for no more than it needed to decide (not the feed's whole 5,000)
    expect(t.asked.max.at(-1)).toBeLessThanOrEqual(MAX_CHANGED + 1 + 1);
  });

  it('keeps what it had when a look fails, and the next look catches up', async () => {
    const t = aTable();
    t.write(summary('a'));
    await t.set.current();
    t.tick(1_000);
    t.write(summary('a', 'failed'));
    const failing = t.asked.of.length;
    const original = t.sources.summariesOf;
    t.sources.summariesOf = async () => {
      throw new Error('throttled');
    };
    await expect(t.set.current()).rejects.toThrow('throttled');
    t.sources.summariesOf = original;
    t.tick(20_000);
    expect(await t.states()).toEqual({ a: 'failed' });
    expect(t.asked.of.length).toBe(failing + 1);
  });

  it('runs one look at a time: calls made during a look share the next one, which sees their writes', async () => {
    const t = aTable();
    t.write(summary('a'));
    await t.set.current();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const original = t.sources.changedSince;
    let looks = 0;
    t.sources.changedSince = async (from, max) => {
      looks += 1;
      if (looks === 1) await gate;
      return original(from, max);
    };
    t.tick(1_000);
    const first = t.set.current();
    t.write(summary('b'));
    const second = t.set.current();
    const third = t.set.current();
    release();
    await first;
    const [two, three] = await Promise.all([second, third]);
    expect(looks).toBe(2);
    expect(two.map((s) => s.id).sort()).toEqual(['a', 'b']);
    expect(three.map((s) => s.id).sort()).toEqual(['a', 'b']);
  });
});
