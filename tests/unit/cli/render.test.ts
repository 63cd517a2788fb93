import { describe, expect, it } from 'vitest';
import {
  colorWanted,
  progressLine,
  renderEvent,
  table,
  trackProgress,
  type ProgressState,
} from '../../../cli/render.js';

const plain = { color: false };
const color = { color: true };
const log = (message: string, stream?: string, target = 'local-1') => ({
  event: 'log',
  data: { type: 'log', log: { target_name: target, level: 'info', message, metadata: stream ? { stream } : null } },
});

describe('rendering', () => {
  it('prints output lines as "target | text", plain when not colored', () => {
    expect(renderEvent(plain, log('hello\nworld\n', 'stdout'))).toEqual(['local-1 | hello', 'local-1 | world']);
    expect(renderEvent(plain, log('Step started'))).toEqual(['local-1 · Step started']);
  });

  it('colors the target and stderr lines on a terminal', () => {
    const [line] = renderEvent(color, log('oops', 'stderr'));
    expect(line).toContain('\x1b[31moops\x1b[0m');
    expect(line).toMatch(/^\x1b\[3\dmlocal-1\x1b\[0m/);
  });

  it("drops the target's control characters (no cursor moves, no color injection)", () => {
    expect(renderEvent(plain, log('a\x1b[2Jb\x07c', 'stdout'))).toEqual(['local-1 | a[2Jbc']);
  });

  it('prints step failures and the terminal state change; nothing for pings and progress', () => {
    expect(
      renderEvent(plain, { event: 'step_update', data: { state: 'failed', exit_code: 3, error_message: 'exit 3' } }),
    ).toEqual(['step failed (exit 3): exit 3']);
    expect(renderEvent(plain, { event: 'state_change', data: { new_state: 'success' } })).toEqual([
      'deployment success',
    ]);
    expect(renderEvent(plain, { event: 'ping', data: {} })).toEqual([]);
    expect(renderEvent(plain, { event: 'progress', data: { progress: 0.5 } })).toEqual([]);
  });

  it('colors only a terminal without NO_COLOR or TERM=dumb', () => {
    expect([
      colorWanted(true, {}),
      colorWanted(false, {}),
      colorWanted(true, { NO_COLOR: '1' }),
      colorWanted(true, { TERM: 'dumb' }),
    ]).toEqual([true, false, false, false]);
  });

  it('tracks the progress line from progress and step events', () => {
    const state: ProgressState = { completed: 0, failed: 0, total: 0, running: 0 };
    trackProgress(state, { event: 'step_update', data: { state: 'running' } });
    trackProgress(state, { event: 'progress', data: { total_steps: 4, completed_steps: 0 } });
    expect(progressLine(plain, state, 'abc')).toBe('abc [....................] 0/4 steps done, 1 running');
    trackProgress(state, { event: 'step_update', data: { state: 'failed' } });
    trackProgress(state, { event: 'progress', data: { total_steps: 4, completed_steps: 2 } });
    expect(progressLine(plain, state, 'abc')).toBe('abc [##########..........] 1/4 steps done, 0 running, 1 failed');
  });

  it('pads table columns by their visible width', () => {
    expect(
      table([
        ['A', 'B'],
        ['\x1b[32mlong\x1b[0m', 'x'],
      ]),
    ).toBe('A     B\n\x1b[32mlong\x1b[0m  x');
  });
});
