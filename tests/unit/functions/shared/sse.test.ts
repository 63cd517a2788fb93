import { describe, expect, it } from 'vitest';
import { sseComment, sseMessage, sseRetry } from '../../../../functions/shared/sse.js';

describe('SSE framing', () => {
  it('writes one data line of JSON and no event field', () => {
    const frame = sseMessage({ event: 'log', data: { type: 'log', message: 'line one\nline two' } });
    expect(frame.endsWith('\n\n')).toBe(true);
    const lines = frame.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.startsWith('data: ')).toBe(true);
    expect(JSON.parse(lines[0]!.slice(6))).toEqual({
      event: 'log',
      data: { type: 'log', message: 'line one\nline two' },
    });
  });

  it('puts the id line before the data line', () => {
    expect(sseMessage({ a: 1 }, 17)).toBe('id: 17\ndata: {"a":1}\n\n');
  });

  it('keeps comments and ids on one line', () => {
    expect(sseComment('keep\nalive')).toBe(': keep alive\n\n');
    expect(sseMessage(1, 'a\nb')).toBe('id: ab\ndata: 1\n\n');
    expect(sseRetry(1500.7)).toBe('retry: 1500\n\n');
  });
});
