// The front's count of the rate limit per address (GCRA): the burst, the sustained rate, the wait it names, and
// addresses apart.
import { describe, expect, it } from 'vitest';
import { createAddressLimit } from '../../../local/address-limit.js';

describe('createAddressLimit', () => {
  it('lets a burst through, then one request per interval, naming the wait', () => {
    let now = 0;
    const limit = createAddressLimit({ ratePerSecond: 2, burst: 3 }, () => now);
    expect([1, 2, 3].map(() => limit.take('a').within)).toEqual([true, true, true]);
    expect(limit.take('a')).toEqual({ within: false, retryAfterSeconds: 1 });
    expect(limit.take('b').within).toBe(true);
    now = 499;
    expect(limit.take('a').within).toBe(false);
    now = 500;
    expect(limit.take('a').within).toBe(true);
    expect(limit.take('a').within).toBe(false);
    now = 10_000;
    expect([1, 2, 3, 4].map(() => limit.take('a').within)).toEqual([true, true, true, false]);
  });

  it('forgets idle addresses without changing their answers', () => {
    let now = 0;
    const limit = createAddressLimit({ ratePerSecond: 1, burst: 1 }, () => now);
    expect(limit.take('a').within).toBe(true);
    now = 120_000;
    expect(limit.take('b').within).toBe(true); // sweeps 'a'
    expect(limit.take('a').within).toBe(true);
    expect(limit.take('a').within).toBe(false);
  });
});
