import { describe, expect, it } from 'vitest';
import { parseDateTime } from '../../../../domain/tenancy/date-time.js';

describe('parseDateTime', () => {
  it.each([
    ['2026-03-01T18:00:00Z', '2026-03-01T18:00:00.000Z'],
    ['2026-03-01T18:00Z', '2026-03-01T18:00:00.000Z'],
    ['2026-03-01t18:00:00.5z', '2026-03-01T18:00:00.500Z'],
    ['2026-03-01T18:00:00.123456789+02:00', '2026-03-01T16:00:00.123Z'],
    ['2026-03-01T18:00:00-05:30', '2026-03-01T23:30:00.000Z'],
    ['2026-01-01T00:30:00+01:00', '2025-12-31T23:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('reads %s as %s', (input, expected) => {
    expect(parseDateTime(input)?.toISOString()).toBe(expected);
  });

  it.each([
    ['no offset', '2026-03-01T18:00:00'],
    ['a date only', '2026-03-01'],
    ['February 30th', '2026-02-30T00:00:00Z'],
    ['February 29th of a common year', '2025-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['hour 24', '2026-03-01T24:00:00Z'],
    ['minute 60', '2026-03-01T23:60:00Z'],
    ['an offset minute of 60', '2026-03-01T10:00:00+01:60'],
    ['a three-digit year', '999-03-01T10:00:00Z'],
    ['a UTC year before 1000', '1000-01-01T00:30:00+01:00'],
    ['free text', 'tomorrow'],
  ])('refuses %s', (_what, input) => {
    expect(parseDateTime(input)).toBeUndefined();
  });
});
