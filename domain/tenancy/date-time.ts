// ISO 8601 / RFC 3339 date-times with an explicit offset (`Z` or `±hh:mm`), as freezes take them. Parsed by hand
// so that impossible dates (February 30th) and offset-less local times are refused instead of being guessed.

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The instant, or undefined when `value` is not a valid date-time with offset (UTC years 1000 to 9999). */
export const parseDateTime = (value: string): Date | undefined => {
  const match = DATE_TIME.exec(value);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offsetMinutes =
    match[8] !== undefined ? 0 : (match[9] === '-' ? -1 : 1) * (Number(match[10]) * 60 + Number(match[11]));
  if (
    month < 1 ||
    month > 12 ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    Math.abs(offsetMinutes) > 18 * 60 ||
    Number(match[11] ?? 0) > 59
  )
    return undefined;
  // setUTCFullYear, unlike Date.UTC, does not read years 0 to 99 as 1900 to 1999.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  if (local.getUTCDate() !== day || local.getUTCMonth() !== month - 1) return undefined;
  local.setUTCHours(hour, minute, second, millis);
  const instant = new Date(local.getTime() - offsetMinutes * 60_000);
  // Four-digit UTC years only, so the stored toISOString() values keep sorting as strings.
  const utcYear = instant.getUTCFullYear();
  return utcYear >= 1000 && utcYear <= 9999 ? instant : undefined;
};

export const isDateTime = (value: string): boolean => parseDateTime(value) !== undefined;
