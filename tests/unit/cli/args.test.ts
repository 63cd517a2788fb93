import { describe, expect, it } from 'vitest';
import { keyValue, parseArgs, parseDuration, type FlagSpecs } from '../../../cli/args.js';
import { UsageError } from '../../../cli/errors.js';

const specs: FlagSpecs = {
  action: { kind: 'string', help: '' },
  tag: { kind: 'list', help: '' },
  wait: { kind: 'boolean', help: '' },
  output: { kind: 'string', short: 'o', help: '' },
};

const usage = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no usage error');
};

describe('parseArgs', () => {
  it('reads --flag value, --flag=value, booleans, repeated lists, short flags and positionals', () => {
    const parsed = parseArgs(
      ['abc', '--action', 'web', '--tag=role=web', '--tag', 'env=prod', '--wait', '-o', 'json'],
      specs,
    );
    expect(parsed).toEqual({
      flags: { action: 'web', tag: ['role=web', 'env=prod'], wait: true, output: 'json' },
      positionals: ['abc'],
    });
  });

  it('takes everything after -- as positionals', () => {
    expect(parseArgs(['--', '--wait', '-x'], specs).positionals).toEqual(['--wait', '-x']);
  });

  it.each([
    [['--nope'], 'unknown flag --nope'],
    [['-x'], 'unknown flag -x'],
    [['--action'], '--action needs a value'],
    [['--action', '--wait'], '--action needs a value'],
    [['--action', 'a', '--action', 'b'], '--action given twice'],
    [['--wait=yes'], '--wait takes no value'],
  ])('%j is a usage error naming the flag', (argv, message) => {
    expect(usage(() => parseArgs(argv, specs, 'deploy'))).toContain(message);
  });
});

describe('values', () => {
  it('parses durations in s, m, h and bare seconds', () => {
    expect([
      parseDuration('90', 't'),
      parseDuration('90s', 't'),
      parseDuration('10m', 't'),
      parseDuration('1h', 't'),
    ]).toEqual([90_000, 90_000, 600_000, 3_600_000]);
    expect(usage(() => parseDuration('soon', 'timeout'))).toContain('--timeout must be a duration');
    expect(usage(() => parseDuration('0', 'timeout'))).toContain('more than 0');
  });

  it('splits K=V at the first =, and refuses an empty key', () => {
    expect(keyValue('A=b=c', 'var')).toEqual({ key: 'A', value: 'b=c' });
    expect(keyValue('A=', 'var')).toEqual({ key: 'A', value: '' });
    expect(usage(() => keyValue('=x', 'var'))).toContain('--var must be KEY=VALUE');
    expect(usage(() => keyValue('novalue', 'tag'))).toContain('--tag must be KEY=VALUE');
  });
});
