import { describe, expect, it } from 'vitest';
import { backoffDelay, retryAfterMs } from '../../../agent/backoff.js';

describe('backoffDelay', () => {
  it('starts at 0.5 s, doubles, and stops growing at 15 s', () => {
    // Prepare
    const highest = () => 0.999999;
    // Act
    const delays = Array.from({ length: 9 }, (_, attempt) => backoffDelay(attempt, highest));
    // Assess
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 15000, 15000, 15000, 15000]);
  });

  it('draws each delay from the upper half of its step (jitter)', () => {
    // Prepare
    const lowest = () => 0;
    // Act
    const delays = [0, 1, 5, 40].map((attempt) => backoffDelay(attempt, lowest));
    const random = Array.from({ length: 100 }, () => backoffDelay(3));
    // Assess
    expect(delays).toEqual([250, 500, 7500, 7500]);
    expect(random.every((d) => d >= 2000 && d <= 4000)).toBe(true);
    expect(new Set(random).size).toBeGreaterThan(1);
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates', () => {
    // Prepare
    const now = Date.parse('2026-11-22T10:00:00Z');
    // Act
    const seconds = retryAfterMs('3', now);
    const date = retryAfterMs('Sun, 22 Nov 2026 10:00:07 GMT', now);
    const past = retryAfterMs('Sun, 22 Nov 2026 09:00:00 GMT', now);
    // Assess
    expect(seconds).toBe(3000);
    expect(date).toBe(7000);
    expect(past).toBe(0);
  });

  it('ignores what it cannot read and caps absurd waits at five minutes', () => {
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs('86400')).toBe(300_000);
  });
});
