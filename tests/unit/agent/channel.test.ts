import { describe, expect, it } from 'vitest';
import {
  cadenceSeconds,
  Drainer,
  heartbeatDelay,
  heartbeatPlan,
  parseServerMessage,
  type Cadence,
  type Link,
} from '../../../agent/channel.js';

const cadence: Cadence = { busyMs: 15_000, idleMs: 300_000 };

describe('parseServerMessage', () => {
  it.each([
    ['{"type":"wake"}', { type: 'wake' }],
    ['{"type":"replaced"}', { type: 'replaced' }],
    ['{"type":"revoked"}', { type: 'revoked' }],
    [
      '{"type":"command","command":{"id":"c1","script":"true"}}',
      { type: 'command', command: { id: 'c1', script: 'true' } },
    ],
    ['{"type":"command"}', { type: 'unknown', name: 'command (without a command)' }],
    [
      '{"type":"error","error":{"code":"VALIDATION_ERROR","message":"unknown action"}}',
      { type: 'error', code: 'VALIDATION_ERROR', message: 'unknown action' },
    ],
    ['{"type":"error"}', { type: 'error', code: 'UNKNOWN', message: '' }],
    ['{"type":"party"}', { type: 'unknown', name: 'party' }],
    ['{"kind":"wake"}', { type: 'unknown', name: '(no type)' }],
    ['null', { type: 'unknown', name: '(no type)' }],
    ['wake', { type: 'unknown', name: '(not JSON)' }],
  ])('reads %s', (text, expected) => {
    expect(parseServerMessage(text)).toEqual(expected);
  });

  it('names a binary frame unknown', () => {
    expect(parseServerMessage(new ArrayBuffer(2))).toEqual({ type: 'unknown', name: '(binary frame)' });
  });
});

describe('heartbeatPlan', () => {
  it.each<[Link, boolean, string, number]>([
    ['socket', true, 'socket', 15_000],
    ['socket', false, 'socket', 300_000],
    ['polling', true, 'http', 15_000],
    ['polling', false, 'http', 15_000],
    ['connecting', true, 'http', 15_000],
    ['connecting', false, 'none', 15_000],
  ])('%s, busy %s: %s every %i ms', (link, busy, via, intervalMs) => {
    expect(heartbeatPlan(link, busy, cadence)).toEqual({ via, intervalMs });
  });
});

describe('heartbeatDelay', () => {
  it('waits until the next beat is due', () => {
    expect(heartbeatDelay({ via: 'socket', intervalMs: 15_000 }, 1_000, 6_000, cadence)).toBe(10_000);
  });

  it('is 0 when the beat is overdue (a first heartbeat, or busy again after a long idle)', () => {
    expect(heartbeatDelay({ via: 'http', intervalMs: 15_000 }, 0, 100_000, cadence)).toBe(0);
    expect(heartbeatDelay({ via: 'socket', intervalMs: 15_000 }, 1_000, 200_000, cadence)).toBe(0);
  });

  it('never sleeps longer than the busy interval, so work that starts while idle is noticed', () => {
    expect(heartbeatDelay({ via: 'socket', intervalMs: 300_000 }, 1_000, 2_000, cadence)).toBe(15_000);
  });

  it('re-plans after the busy interval when nothing is to be sent', () => {
    expect(heartbeatDelay({ via: 'none', intervalMs: 15_000 }, 0, 100_000, cadence)).toBe(15_000);
  });
});

describe('cadenceSeconds', () => {
  it('takes the shorter of the agent and the server, and the agent when the server names none', () => {
    expect(cadenceSeconds(15, 5)).toBe(5);
    expect(cadenceSeconds(0.5, 15)).toBe(0.5);
    expect(cadenceSeconds(300, Number.POSITIVE_INFINITY)).toBe(300);
  });
});

/** A drain that stays pending until released, counting how many run and how many run at once. */
const gatedDrain = () => {
  const releases: (() => void)[] = [];
  let running = 0;
  const stats = { started: 0, maxAtOnce: 0 };
  const drain = () =>
    new Promise<void>((resolve) => {
      stats.started += 1;
      running += 1;
      stats.maxAtOnce = Math.max(stats.maxAtOnce, running);
      releases.push(() => {
        running -= 1;
        resolve();
      });
    });
  const releaseNext = async () => {
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { drain, stats, releaseNext, pending: () => releases.length };
};

describe('Drainer', () => {
  it('drains at once when idle', async () => {
    // Prepare
    const gate = gatedDrain();
    const drainer = new Drainer(gate.drain, () => undefined);
    // Act
    const done = drainer.request();
    // Assess
    expect(gate.stats.started).toBe(1);
    expect(drainer.draining).toBe(true);
    await gate.releaseNext();
    await done;
    expect(drainer.draining).toBe(false);
  });

  it('coalesces requests during a drain into exactly one more drain after it, never two at once', async () => {
    // Prepare
    const gate = gatedDrain();
    const drainer = new Drainer(gate.drain, () => undefined);
    const first = drainer.request();
    // Act
    const second = drainer.request();
    const third = drainer.request();
    await gate.releaseNext();
    // Assess
    expect(gate.stats.started).toBe(2);
    expect(gate.pending()).toBe(1);
    await gate.releaseNext();
    await Promise.all([first, second, third]);
    expect(gate.stats.started).toBe(2);
    expect(gate.stats.maxAtOnce).toBe(1);
    expect(drainer.draining).toBe(false);
  });

  it('loses no request made as a drain ends', async () => {
    // Prepare
    const gate = gatedDrain();
    const drainer = new Drainer(gate.drain, () => undefined);
    void drainer.request();
    // Act: the request arrives right after the drain resolved, before the drainer's loop looked again
    gate.stats.started = 0;
    const release = gate.releaseNext();
    void drainer.request();
    await release;
    // Assess
    expect(gate.stats.started).toBe(1);
    await gate.releaseNext();
    expect(drainer.draining).toBe(false);
  });

  it('reports a failed drain and keeps serving requests', async () => {
    // Prepare
    const errors: unknown[] = [];
    let calls = 0;
    const drainer = new Drainer(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('503');
      },
      (error) => errors.push(error),
    );
    // Act
    await drainer.request();
    await drainer.request();
    // Assess
    expect(errors).toEqual([new Error('503')]);
    expect(calls).toBe(2);
  });
});
