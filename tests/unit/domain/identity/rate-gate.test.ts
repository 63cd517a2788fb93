// The amortised rate gate on one instance, over an in-memory bucket: concurrent requests of one client (one
// serverless-offline process serves them all locally) share one write instead of each taking a lease.
// The gate against the real bucket across instances: tests/integration/infra/dynamodb/rate-limiter.test.ts.
import { describe, expect, it } from 'vitest';
import type { RateDecision, RateLimiter, RatePolicy } from '../../../../domain/identity/ports.js';
import { amortisedRateGate } from '../../../../domain/identity/rate-gate.js';
import { FakeClock } from '../../../fakes/clock.js';

const POLICY: RatePolicy = { ratePerSecond: 100, burst: 200 };

/** A bucket that never refills (the clock stands still) and answers after a pause, as a store would. */
class SlowBucket implements RateLimiter {
  writes = 0;
  private left = new Map<string, number>();
  constructor(private readonly burst: number) {}
  async take(key: string, _policy: RatePolicy, _now: Date, count = 1): Promise<RateDecision> {
    this.writes += 1;
    await new Promise((resolve) => setTimeout(resolve, 1));
    const left = this.left.get(key) ?? this.burst;
    if (left < count) return { allowed: false, remaining: 0, retryAfterSeconds: 1 };
    this.left.set(key, left - count);
    return { allowed: true, remaining: left - count, retryAfterSeconds: 0 };
  }
}

describe('amortised rate gate, concurrent requests of one client on one instance', () => {
  it('lets exactly the burst through a concurrent flood, with about one write per lease', async () => {
    // Prepare
    const bucket = new SlowBucket(POLICY.burst);
    const gate = amortisedRateGate(bucket, () => POLICY, new FakeClock());
    // Act
    const decisions = await Promise.all(Array.from({ length: 400 }, () => gate('198.51.100.7')));
    // Assess
    expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds >= 1)).toBe(true);
    expect(bucket.writes).toBeLessThanOrEqual(200 / 10 + 2);
  });

  it('keeps clients apart: each gets its own burst', async () => {
    // Prepare
    const bucket = new SlowBucket(5);
    const gate = amortisedRateGate(bucket, () => ({ ratePerSecond: 1, burst: 5 }), new FakeClock());
    // Act
    const [first, second] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => gate('198.51.100.1'))),
      Promise.all(Array.from({ length: 8 }, () => gate('198.51.100.2'))),
    ]);
    // Assess
    expect(first!.filter((d) => d.allowed)).toHaveLength(5);
    expect(second!.filter((d) => d.allowed)).toHaveLength(5);
  });
});
