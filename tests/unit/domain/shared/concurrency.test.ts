// eachLimited: at most `limit` in flight, every item tried, the first failure thrown after all were tried.
import { describe, expect, it } from 'vitest';
import { eachLimited } from '../../../../domain/shared/concurrency.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('eachLimited', () => {
  it('keeps at most the limit in flight and runs every item once', async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    await eachLimited(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (n) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await tick();
        seen.push(n);
        inFlight -= 1;
      },
    );
    expect(most).toBe(4);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('tries every item after a failure, then throws the first failure', async () => {
    const seen: number[] = [];
    const run = eachLimited([1, 2, 3, 4, 5], 2, async (n) => {
      await tick();
      seen.push(n);
      if (n === 2 || n === 4) throw new Error(`item ${n}`);
    });
    await expect(run).rejects.toThrow('item 2');
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('does nothing for no items, and runs one at a time for a limit under 1', async () => {
    await expect(eachLimited([], 3, async () => undefined)).resolves.toBeUndefined();
    let most = 0;
    let inFlight = 0;
    await eachLimited([1, 2, 3], 0, async () => {
      most = Math.max(most, (inFlight += 1));
      await tick();
      inFlight -= 1;
    });
    expect(most).toBe(1);
  });
});
