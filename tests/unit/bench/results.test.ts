import { describe, expect, it } from 'vitest';
import {
  formatTable,
  formatValue,
  meetsGoal,
  parseResultLine,
  parseResults,
  resultLine,
  type Figure,
} from '../../bench/results.js';

const figure = (over: Partial<Figure> = {}): Figure => ({
  bench: 'output',
  name: 'output -> SSE client p95',
  value: 238,
  unit: 'ms',
  goal: '',
  ...over,
});

describe('RESULT lines', () => {
  it('reads back the figure it printed', () => {
    // Prepare
    const printed = figure({ name: 'a "quoted" name, with commas', value: 0.125, goal: '≤ 100 ms' });

    // Act
    const parsed = parseResultLine(resultLine(printed));

    // Assess
    expect(resultLine(printed)).toBe(
      'RESULT {"bench":"output","name":"a \\"quoted\\" name, with commas","value":0.125,"unit":"ms","goal":"≤ 100 ms"}',
    );
    expect(parsed).toEqual(printed);
  });

  it('ignores every other line, and reads a line with surrounding spaces and no goal', () => {
    expect(parseResultLine('   p50 12.00 ms  p95 14.00 ms')).toBeUndefined();
    expect(parseResultLine('RESULTS are below')).toBeUndefined();
    expect(parseResultLine('')).toBeUndefined();
    expect(parseResultLine('  RESULT {"bench":"b","name":"n","value":3,"unit":"s"}\r')).toEqual({
      bench: 'b',
      name: 'n',
      value: 3,
      unit: 's',
      goal: '',
    });
  });

  it.each([
    ['RESULT {"bench":"b","name":"n","value":1,', /not JSON/],
    ['RESULT [1,2]', /not an object/],
    ['RESULT {"name":"n","value":1,"unit":"ms"}', /without a bench/],
    ['RESULT {"bench":"b","name":"","value":1,"unit":"ms"}', /without a name/],
    ['RESULT {"bench":"b","name":"n","value":"1","unit":"ms"}', /finite number/],
    ['RESULT {"bench":"b","name":"n","value":null,"unit":"ms"}', /finite number/],
    ['RESULT {"bench":"b","name":"n","value":1,"unit":"µs"}', /unit "µs"/],
    ['RESULT {"bench":"b","name":"n","value":1,"unit":"ms","goal":5}', /goal/],
  ])('refuses a malformed RESULT line: %s', (line, message) => {
    expect(() => parseResultLine(line)).toThrow(message);
  });

  it('collects the figures of a whole output, in order, among other lines', () => {
    const output = [
      'Idle dashboard: one resource stream',
      resultLine(figure({ bench: 'dashboard', name: 'first', value: 1, unit: 'items/s' })),
      '   stopped; child processes left: none',
      resultLine(figure({ bench: 'dashboard', name: 'second', value: 2, unit: 'items/s' })),
      '',
    ].join('\n');

    expect(parseResults(output).map((f) => [f.name, f.value])).toEqual([
      ['first', 1],
      ['second', 2],
    ]);
  });
});

describe('formatValue', () => {
  it.each([
    [238.4, 'ms', '238 ms'],
    [3.94, 's', '3.94 s'],
    [12.345, 'ms', '12.3 ms'],
    [0.0123, 'ms', '0.012 ms'],
    [10000, 'items/s', '10000 items/s'],
    [0.1, 'count', '0.1'],
    [85, '%', '85 %'],
  ] as const)('%s %s reads %s', (value, unit, text) => {
    expect(formatValue(value, unit)).toBe(text);
  });
});

describe('meetsGoal', () => {
  it.each([
    [99.9, 'ms', '≤ 100 ms', true],
    [100.1, 'ms', '≤ 100 ms', false],
    [100, 'ms', '< 100 ms', false],
    [4.9, 's', '5 s', true],
    [5.1, 's', '5 s', false],
    [95, '%', '>= 90 %', true],
    [80, '%', '≥ 90 %', false],
    [0, 'count', '< 1', true],
  ] as const)('%s %s against %s: %s', (value, unit, goal, met) => {
    expect(meetsGoal(value, unit, goal)).toBe(met);
  });

  it('has no opinion on an empty goal, words, or another unit', () => {
    expect(meetsGoal(1, 'ms', '')).toBeUndefined();
    expect(meetsGoal(1, 'ms', 'as low as possible')).toBeUndefined();
    expect(meetsGoal(1, 'ms', '≤ 1 s')).toBeUndefined();
  });
});

describe('formatTable', () => {
  const previous = [
    figure({ bench: 'bundles', name: 'init, slowest function (median)', value: 190, goal: '≤ 100 ms' }),
    figure({ bench: 'fanout', name: '100 agents: create -> terminal, warm', value: 63, unit: 's', goal: '5 s' }),
  ];

  it('prints bench, figure, now, previous and goal, aligned, previous figures not measured last', () => {
    // Prepare
    const now = [
      figure({ bench: 'bundles', name: 'init, slowest function (median)', value: 84.26, goal: '≤ 100 ms' }),
      figure({ bench: 'http', name: 'GET /health p50', value: 1.234, goal: '' }),
    ];

    // Act
    const table = formatTable(now, { previous });

    // Assess
    expect(table.split('\n')).toEqual([
      'bench    figure                                    now  previous  goal',
      '-------  ------------------------------------  -------  --------  --------',
      'bundles  init, slowest function (median)       84.3 ms    190 ms  ≤ 100 ms',
      'http     GET /health p50                       1.23 ms         -',
      'fanout   100 agents: create -> terminal, warm        -      63 s  5 s',
    ]);
  });

  it('marks a value that misses its goal, taking the goal from the previous figure when the run gives none', () => {
    const now = [
      figure({ bench: 'bundles', name: 'init, slowest function (median)', value: 120, goal: '' }),
      figure({ bench: 'fanout', name: '100 agents: create -> terminal, warm', value: 4, unit: 's', goal: '' }),
    ];

    const rows = formatTable(now, { previous }).split('\n');

    expect(rows[2]).toMatch(/^bundles +init, slowest function \(median\) +120 ms ! +190 ms +≤ 100 ms$/);
    expect(rows[3]).toMatch(/^fanout +100 agents: create -> terminal, warm +4 s +63 s +5 s$/);
  });

  it('adds a last-run column when a run was saved, and a row for each bench that failed', () => {
    const now = [figure({ value: 240 })];
    const lastRun = [figure({ value: 250 })];

    const rows = formatTable(now, {
      previous: [figure({ value: 562 })],
      lastRun,
      failed: [{ bench: 'fanout', reason: 'failed: timed out after 25 min' }],
    }).split('\n');

    expect(rows[0]).toMatch(/^bench +figure +now +previous +last run +goal$/);
    expect(rows[2]).toMatch(/^output +output -> SSE client p95 +240 ms +562 ms +250 ms$/);
    expect(rows[3]).toMatch(/^fanout +\(failed: timed out after 25 min\) +-$/);
    expect(rows).toHaveLength(4);
  });
});
