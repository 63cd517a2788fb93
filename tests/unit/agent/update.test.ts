// The auto-update's version rules (agent/update.ts): semver precedence, the server's accepted range, and which
// releases an agent takes (newer, same major version, accepted), as a table.
import { describe, expect, it } from 'vitest';
import { parseCli } from '../../../agent/cli.js';
import { compareVersions, parseVersion, satisfies, updateRefusal } from '../../../agent/update.js';

const version = (text: string) => {
  const parsed = parseVersion(text);
  if (parsed === undefined) throw new Error(`not a version: ${text}`);
  return parsed;
};

describe('compareVersions', () => {
  it.each([
    ['1.0.0', '1.0.1', -1],
    ['1.0.10', '1.0.9', 1],
    ['1.2.0', '1.10.0', -1],
    ['2.0.0', '1.99.99', 1],
    ['1.0.0', '1.0.0', 0],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['1.0.0-alpha', '1.0.0-alpha.1', -1],
    ['1.0.0-alpha.beta', '1.0.0-beta', -1],
    ['1.0.0-beta.2', '1.0.0-beta.11', -1],
    ['1.0.0-rc.1', '1.0.0-1', 1],
    ['1.0.0+build.5', '1.0.0', 0],
  ])('%s against %s is %i', (a, b, expected) => {
    // Act
    const order = compareVersions(version(a), version(b));
    // Assess: and the other way round
    expect(order).toBe(expected);
    expect(compareVersions(version(b), version(a))).toBe(-expected || 0);
  });

  it('reads only semantic versions', () => {
    expect(parseVersion('1.0')).toBeUndefined();
    expect(parseVersion('latest')).toBeUndefined();
    expect(parseVersion('1.0.0; rm -rf /')).toBeUndefined();
  });
});

describe('satisfies', () => {
  it.each([
    ['1.0.0', '>=1.0.0 <2.0.0', true],
    ['1.9.3', '>=1.0.0 <2.0.0', true],
    ['2.0.0', '>=1.0.0 <2.0.0', false],
    ['0.9.0', '>=1.0.0 <2.0.0', false],
    ['1.0.0', 'nonsense', false],
  ])('%s in %s: %s', (v, range, expected) => {
    expect(satisfies(version(v), range)).toBe(expected);
  });
});

describe('updateRefusal', () => {
  it.each([
    ['1.0.0', '1.0.1', '>=1.0.0 <2.0.0', undefined],
    ['1.0.0', '1.3.0', undefined, undefined],
    ['1.0.0-rc.1', '1.0.0', '>=1.0.0 <2.0.0', undefined],
    ['1.0.1', '1.0.1', '>=1.0.0 <2.0.0', '1.0.1 is not newer than 1.0.1'],
    ['1.2.0', '1.1.9', '>=1.0.0 <2.0.0', '1.1.9 is not newer than 1.2.0'],
    ['1.0.0', '2.0.0', undefined, '2.0.0 is of another major version than 1.0.0'],
    ['1.0.0', '1.5.0', '>=1.0.0 <1.5.0', '1.5.0 is not among the versions the server accepts (>=1.0.0 <1.5.0)'],
    ['1.0.0', 'next', undefined, 'next is not a version this agent can compare'],
  ])('an agent %s offered %s (accepted %s): %s', (own, release, accepted, expected) => {
    expect(updateRefusal(own, release, accepted)).toBe(expected);
  });
});

describe('--auto-update', () => {
  const environment = { hostname: 'h', cwd: '/tmp', env: {} };

  it('is off unless given, and checks hourly by default', () => {
    const off = parseCli(['--server', 'http://s'], environment);
    const on = parseCli(['--server', 'http://s', '--auto-update'], environment);
    expect(off.kind === 'run' && off.options.autoUpdateMinutes).toBeUndefined();
    expect(on.kind === 'run' && on.options.autoUpdateMinutes).toBe(60);
  });

  it('takes another period, and refuses a nonsense one', () => {
    const every = parseCli(['--server', 'http://s', '--auto-update', '--auto-update-minutes', '5'], environment);
    expect(every.kind === 'run' && every.options.autoUpdateMinutes).toBe(5);
    expect(() =>
      parseCli(['--server', 'http://s', '--auto-update', '--auto-update-minutes', 'x'], environment),
    ).toThrow(/--auto-update-minutes must be a number/);
  });
});
