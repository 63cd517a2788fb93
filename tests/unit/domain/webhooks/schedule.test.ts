import { describe, expect, it } from 'vitest';
import {
  attemptInRound,
  JITTER,
  MAX_ATTEMPTS,
  RETRY_DELAYS_SECONDS,
  retryDelayMs,
} from '../../../../domain/webhooks/schedule.js';

describe('the webhook retry schedule', () => {
  it('waits 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h between eight attempts: about a day', () => {
    // Act
    const waits = Array.from({ length: MAX_ATTEMPTS }, (_, i) => retryDelayMs({ scale: 1, random: () => 0.5 }, i + 1));

    // Assess
    expect(waits).toEqual([10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, undefined]);
    const total = RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeGreaterThan(20);
    expect(total / 3600).toBeLessThan(24);
  });

  it('adds up to 20 % jitter either way', () => {
    const low = retryDelayMs({ scale: 1, random: () => 0 }, 1);
    const high = retryDelayMs({ scale: 1, random: () => 0.999999 }, 1);
    expect(low).toBe(10_000 * (1 - JITTER));
    expect(high).toBeGreaterThan(11_999);
    expect(high).toBeLessThanOrEqual(12_000);
  });

  it('scales by configuration, so a test runs the whole day in seconds', () => {
    const waits = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) =>
      retryDelayMs({ scale: 0.0001, random: () => 0.5 }, i + 1),
    );
    expect(waits.reduce<number>((a, b) => a + (b ?? 0), 0)).toBeLessThan(10_000);
  });

  it('starts a new round after a redeliver', () => {
    expect([1, 8, 9, 16, 17].map(attemptInRound)).toEqual([1, 8, 1, 8, 1]);
  });
});
