// The benchmarks' percentile (tests/bench/stats.ts): nearest rank on sorted samples.
import { describe, expect, it } from 'vitest';
import { percentile } from '../../bench/stats.js';

describe('percentile', () => {
  it('takes the nearest rank: p50 of 1..10 is 6, p95 and p100 the largest, p0 the smallest', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect([0, 50, 95, 100].map((p) => percentile(sorted, p))).toEqual([1, 6, 10, 10]);
  });

  it('is NaN without samples, and the one value with one', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([42], 95)).toBe(42);
  });
});
