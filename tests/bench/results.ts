// The benchmarks' machine-readable figures and the table `npm run bench` prints from them. Each benchmark ends
// with one line per key figure:
//   RESULT {"bench":"<bench>","name":"<short name>","value":<number>,"unit":"<unit>","goal":"<text or empty>"}
// and tests/bench/run.ts collects them, compares them with tests/bench/baseline.json (the figures before issue 13)
// and, when saved with --save, tests/bench/last-run.json.

export const UNITS = ['ms', '%', 'count', 'items/s', 'KiB', 's', 'ops'] as const;
export type Unit = (typeof UNITS)[number];

export interface Figure {
  readonly bench: string;
  readonly name: string;
  readonly value: number;
  readonly unit: Unit;
  /** What the figure should be, e.g. `≤ 100 ms`; empty when no goal was set. */
  readonly goal: string;
}

const PREFIX = 'RESULT ';

/** The RESULT line of a figure. */
export const resultLine = (figure: Figure): string =>
  PREFIX +
  JSON.stringify({
    bench: figure.bench,
    name: figure.name,
    value: figure.value,
    unit: figure.unit,
    goal: figure.goal,
  });

/** Prints the RESULT lines of a benchmark's figures (at its end, after its human-readable output). */
export const printResults = (figures: readonly Figure[]): void => {
  for (const figure of figures) console.log(resultLine(figure));
};

/**
 * The figure of a RESULT line; undefined for any other line. A line that starts with `RESULT ` but does not hold a
 * well-formed figure throws, naming what is wrong, so a benchmark that prints a broken figure is noticed.
 */
export const parseResultLine = (line: string): Figure | undefined => {
  const text = line.trim();
  if (!text.startsWith(PREFIX)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(PREFIX.length));
  } catch {
    throw new Error(`RESULT line is not JSON: ${text}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`RESULT line is not an object: ${text}`);
  const { bench, name, value, unit, goal = '' } = parsed as Record<string, unknown>;
  if (typeof bench !== 'string' || bench === '') throw new Error(`RESULT line without a bench: ${text}`);
  if (typeof name !== 'string' || name === '') throw new Error(`RESULT line without a name: ${text}`);
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new Error(`RESULT line without a finite number value: ${text}`);
  if (typeof unit !== 'string' || !(UNITS as readonly string[]).includes(unit))
    throw new Error(`RESULT line with unit ${JSON.stringify(unit)}, not one of ${UNITS.join(' ')}: ${text}`);
  if (typeof goal !== 'string') throw new Error(`RESULT line with a goal that is not text: ${text}`);
  return { bench, name, value, unit: unit as Unit, goal };
};

/** The figures among some output lines (a benchmark's stdout), in order. */
export const parseResults = (output: string): Figure[] =>
  output.split('\n').flatMap((line) => {
    const figure = parseResultLine(line);
    return figure === undefined ? [] : [figure];
  });

/** A value with its unit, to three significant digits at most for small values: `0.012 ms`, `3.9 s`, `238 ms`. */
export const formatValue = (value: number, unit: Unit): string => {
  const abs = Math.abs(value);
  const digits =
    abs >= 100 || Number.isInteger(value)
      ? String(Math.round(value))
      : abs >= 1
        ? String(Number(value.toFixed(abs >= 10 ? 1 : 2)))
        : String(Number(value.toPrecision(2)));
  return unit === 'count' ? digits : `${digits} ${unit}`;
};

/**
 * Whether a value meets a goal written as `≤ 100 ms`, `<= 5 s`, `≥ 90 %`, `< 1` or a bare `5 s` (read as at most);
 * undefined when the goal is empty, says something else, or names another unit.
 */
export const meetsGoal = (value: number, unit: Unit, goal: string): boolean | undefined => {
  const match = /^\s*(≤|<=|<|≥|>=|>)?\s*(-?\d+(?:\.\d+)?)\s*(\S+)?\s*$/.exec(goal);
  if (match === null) return undefined;
  const [, op = '≤', number, goalUnit] = match;
  if (goalUnit !== undefined && goalUnit !== unit) return undefined;
  const limit = Number(number);
  switch (op) {
    case '<':
      return value < limit;
    case '>':
      return value > limit;
    case '≥':
    case '>=':
      return value >= limit;
    default:
      return value <= limit;
  }
};

export interface TableOptions {
  /** The figures before issue 13 (tests/bench/baseline.json). */
  readonly previous: readonly Figure[];
  /** The figures of the last saved run (tests/bench/last-run.json), if any: a column of their own. */
  readonly lastRun?: readonly Figure[];
  /** Benches that were asked for but printed nothing (failed, timed out): a row each. */
  readonly failed?: readonly { readonly bench: string; readonly reason: string }[];
}

const keyOf = (figure: Pick<Figure, 'bench' | 'name'>) => `${figure.bench}\u0000${figure.name}`;

/**
 * One table of the run's figures: bench | figure | now | previous | (last run) | goal. Every figure measured now
 * is a row, in the order measured, then the previous figures this run did not measure (now `-`). A value that
 * misses its goal is marked `!`.
 */
export const formatTable = (now: readonly Figure[], options: TableOptions): string => {
  const previous = new Map(options.previous.map((f) => [keyOf(f), f]));
  const lastRun = options.lastRun === undefined ? undefined : new Map(options.lastRun.map((f) => [keyOf(f), f]));
  const measured = new Set(now.map(keyOf));
  const cell = (figure: Figure | undefined) => (figure === undefined ? '-' : formatValue(figure.value, figure.unit));
  const rows: string[][] = [];
  const row = (bench: string, name: string, current: Figure | undefined) => {
    const key = keyOf({ bench, name });
    const goal = current?.goal || previous.get(key)?.goal || '';
    const miss = current !== undefined && meetsGoal(current.value, current.unit, goal) === false;
    rows.push([
      bench,
      name,
      `${cell(current)}${miss ? ' !' : ''}`,
      cell(previous.get(key)),
      ...(lastRun === undefined ? [] : [cell(lastRun.get(key))]),
      goal,
    ]);
  };
  for (const figure of now) row(figure.bench, figure.name, figure);
  for (const figure of options.previous) if (!measured.has(keyOf(figure))) row(figure.bench, figure.name, undefined);
  for (const { bench, reason } of options.failed ?? [])
    rows.push([bench, `(${reason})`, '-', '', ...(lastRun === undefined ? [] : ['']), '']);
  const header = ['bench', 'figure', 'now', 'previous', ...(lastRun === undefined ? [] : ['last run']), 'goal'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  // Figures right-aligned, words left-aligned.
  const numeric = header.map((h) => ['now', 'previous', 'last run'].includes(h));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
};
