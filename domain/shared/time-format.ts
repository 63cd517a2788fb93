// The two timestamp forms the API shows. Records are stored with `toISOString()` (`...Z`); the spec shows log and
// analysis records with a `+00:00` offset, everything else with `Z`. One formatter for each form.

/** ISO 8601 with a `+00:00` offset instead of `Z` (log entries, stream `log` members, command results). */
export const offsetTime = (iso: string): string => {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? iso : new Date(time).toISOString().replace(/Z$/, '+00:00');
};

/** ISO 8601 in UTC with `Z` (every other record). */
export const zuluTime = (iso: string): string => {
  const time = Date.parse(iso);
  return Number.isNaN(time) ? iso : new Date(time).toISOString();
};
