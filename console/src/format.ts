// Small display helpers shared by the pages.

/** A time in the reader's local time, with its zone. */
export const when = (iso: unknown): string => {
  if (typeof iso !== 'string' || iso === '') return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { timeZoneName: 'short' });
};

export const duration = (ms: unknown): string => {
  if (typeof ms !== 'number') return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
};

/** A state as a badge class: the colour carries meaning only together with the text. */
export const stateClass = (state: unknown): string => {
  switch (state) {
    case 'success':
    case 'completed':
      return 'state ok';
    case 'failed':
    case 'rolled_back':
      return 'state bad';
    case 'running':
    case 'rolling_back':
      return 'state live';
    case 'cancelled':
    case 'skipped':
      return 'state off';
    default:
      return 'state';
  }
};

export const TERMINAL_STATES: ReadonlySet<string> = new Set(['success', 'failed', 'cancelled', 'rolled_back']);

/** Who triggered it, as people read it: the name the API stored (`triggered_by_name`), else the id, else a dash. */
export const triggerer = (r: { readonly triggered_by?: string | null; readonly triggered_by_name?: string }): string =>
  r.triggered_by_name ?? r.triggered_by ?? '—';
