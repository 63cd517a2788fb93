// The agent never sends more in one output request than the server takes: 100 chunks, 5000 lines, and (well
// under the server's 1 MiB) 256 KiB of data; a chunk with more lines is cut at line breaks.
import { describe, expect, it } from 'vitest';
import { OutputBatcher, splitLines } from '../../../agent/output.js';
import type { OutputChunk } from '../../../protocol/messages.js';
import { MAX_OUTPUT_CHUNKS, MAX_OUTPUT_LINES, outputLineCount } from '../../../protocol/output-limits.js';

describe('output request limits', () => {
  it('cuts text after every n-th line break', () => {
    expect(splitLines('1\n2\n3\n4\n5', 2)).toEqual(['1\n2\n', '3\n4\n', '5']);
    expect(splitLines('1\n2\n', 2)).toEqual(['1\n2\n']);
  });

  it('sends 20000 short lines in requests of at most 5000 lines', async () => {
    const sent: OutputChunk[][] = [];
    const batcher = new OutputBatcher(async (chunks) => void sent.push(chunks), { intervalMs: 1 });
    batcher.append('stdout', 'x\n'.repeat(20_000));
    await batcher.flush();
    expect(sent.length).toBeGreaterThanOrEqual(4);
    for (const request of sent) expect(outputLineCount(request)).toBeLessThanOrEqual(MAX_OUTPUT_LINES);
    expect(sent.flat().reduce((n, c) => n + c.data.length, 0)).toBe(40_000);
  });

  it('sends at most 100 chunks per request (alternating streams make many small chunks)', async () => {
    const sent: OutputChunk[][] = [];
    const batcher = new OutputBatcher(async (chunks) => void sent.push(chunks), { intervalMs: 10_000 });
    for (let i = 0; i < 250; i += 1) batcher.append(i % 2 === 0 ? 'stdout' : 'stderr', `line ${i}\n`);
    await batcher.flush();
    expect(sent.map((r) => r.length)).toEqual([MAX_OUTPUT_CHUNKS, MAX_OUTPUT_CHUNKS, 50]);
    expect(sent.flat().map((c) => c.seq)).toEqual(Array.from({ length: 250 }, (_, i) => i));
  });
});
