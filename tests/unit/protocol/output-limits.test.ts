// What counts as a line of output, one rule for the service (which makes one log event per line) and the agent
// (which counts the lines of every chunk it batches without splitting them).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineCount, outputLineCount, outputLines } from '../../../protocol/output-limits.js';

describe('output lines', () => {
  it.each([
    ['', 1],
    ['a', 1],
    ['a\n', 1],
    ['a\nb', 2],
    ['a\n\n', 2],
    ['\n', 1],
    ['a\r\nb\r\n', 2],
  ])('counts the lines of %j as it splits them', (data, lines) => {
    expect([lineCount(data), outputLines(data).length, outputLineCount([{ data }])]).toEqual([lines, lines, lines]);
  });

  it('counts as many lines as it splits, for any text of line breaks and characters', () => {
    const text = fc.array(fc.constantFrom('a', 'é', ' ', '\n', '\r', '\r\n', '\n\n')).map((parts) => parts.join(''));
    fc.assert(fc.property(text, (data) => lineCount(data) === outputLines(data).length));
  });
});
