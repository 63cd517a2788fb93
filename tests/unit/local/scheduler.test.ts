// The local stand-in for an EventBridge schedule: runs every interval, never overlapping, survives a failed run,
// and stops cleanly.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSchedule } from '../../../local/scheduler.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('startSchedule', () => {
  it('runs the handler every interval; a failed run is logged and the next one comes all the same', async () => {
    // Prepare
    let runs = 0;
    const logged: string[] = [];
    const schedule = startSchedule({
      functionName: 'sweep',
      intervalMs: 1_000,
      log: (line) => logged.push(line),
      handler: async () => {
        runs += 1;
        if (runs === 2) throw new Error('boom');
      },
    });
    // Act
    await vi.advanceTimersByTimeAsync(999);
    const beforeFirst = runs;
    await vi.advanceTimersByTimeAsync(3_001);
    await schedule.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    // Assess
    expect(beforeFirst).toBe(0);
    expect(runs).toBe(4);
    expect(logged).toEqual(['sweep: scheduled run failed: boom']);
  });
});
