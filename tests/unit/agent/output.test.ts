import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BATCH_INTERVAL_MS,
  FIRST_BATCH_MS,
  OutputBatcher,
  SecretMasker,
  splitUtf8,
  utf8Bytes,
} from '../../../agent/output.js';
import type { OutputChunk } from '../../../protocol/messages.js';

const feed = (masker: SecretMasker, pieces: string[]) => pieces.map((p) => masker.push(p)).join('') + masker.end();

describe('SecretMasker', () => {
  it('masks every occurrence of a secret within one piece', () => {
    // Prepare
    const masker = new SecretMasker(['hunter2']);
    // Act
    const out = feed(masker, ['password=hunter2 and again hunter2\n']);
    // Assess
    expect(out).toBe('password=*** and again ***\n');
  });

  it('holds back the start of a secret until the next piece shows it whole', () => {
    // Prepare
    const masker = new SecretMasker(['s3cr3t-value']);
    // Act
    const first = masker.push('token: s3cr');
    const second = masker.push('3t-value done');
    const rest = masker.end();
    // Assess
    expect(first).toBe('token: ');
    expect(second).toBe('*** done');
    expect(rest).toBe('');
  });

  it('releases a held tail once it can no longer be a secret, and at the end', () => {
    // Prepare
    const masker = new SecretMasker(['abcdef']);
    // Act
    const first = masker.push('xx abc');
    const second = masker.push('xyz ab');
    const end = masker.end();
    // Assess
    expect(first).toBe('xx ');
    expect(second).toBe('abcxyz ');
    expect(end).toBe('ab');
  });

  it('never lets a secret through whichever way the output is split', () => {
    // Prepare
    const secrets = ['pa55word', 'tok-ABC-123', 'é€𝄞x'];
    const text = `start pa55word mid tok-ABC-123 pa55pa55word é€𝄞x tok-ABC-12 end pa55word`;
    const expected = 'start *** mid *** pa55*** *** tok-ABC-12 end ***';
    for (let seed = 1; seed <= 200; seed++) {
      let x = seed;
      const pieces: string[] = [];
      for (let i = 0; i < text.length;) {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        const n = 1 + (x % 5);
        pieces.push(text.slice(i, i + n));
        i += n;
      }
      // Act
      const out = feed(new SecretMasker(secrets), pieces);
      // Assess
      expect(out, `split ${JSON.stringify(pieces)}`).toBe(expected);
    }
  });

  it('masks the longer of two secrets that start at the same place', () => {
    // Prepare
    const masker = new SecretMasker(['abc', 'abcdef']);
    // Act
    const out = feed(masker, ['1 abcdef 2 abcxyz']);
    // Assess
    expect(out).toBe('1 *** 2 ***xyz');
  });

  it('passes output through untouched when there are no secrets (empty values do not count)', () => {
    // Prepare
    const masker = new SecretMasker(['']);
    // Act
    const out = masker.push('anything at all');
    // Assess
    expect(out).toBe('anything at all');
  });
});

describe('splitUtf8', () => {
  it('cuts at most maxBytes per piece without splitting a character', () => {
    // Prepare
    const text = 'aé€𝄞'.repeat(50);
    // Act
    const pieces = splitUtf8(text, 7);
    // Assess
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => utf8Bytes(p) <= 7)).toBe(true);
    expect(pieces.every((p) => !p.includes('\uFFFD') && Buffer.from(p, 'utf8').toString('utf8') === p)).toBe(true);
    expect(pieces.length).toBeGreaterThan(1);
  });

  it('leaves short text whole', () => {
    expect(splitUtf8('short', 64)).toEqual(['short']);
  });
});

describe('OutputBatcher', () => {
  let sent: OutputChunk[][];
  const send = async (chunks: OutputChunk[]) => {
    sent.push(chunks);
  };

  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('numbers chunks with one seq across both streams, in order, and merges neighbours of one stream', async () => {
    // Prepare
    const batcher = new OutputBatcher(send);
    // Act
    batcher.append('stdout', 'a');
    batcher.append('stdout', 'b');
    batcher.append('stderr', 'c');
    batcher.append('stdout', 'd');
    await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS);
    // Assess
    expect(sent).toEqual([
      [
        { stream: 'stdout', data: 'ab', seq: 0 },
        { stream: 'stderr', data: 'c', seq: 1 },
        { stream: 'stdout', data: 'd', seq: 2 },
      ],
    ]);
  });

  it('sends a line after a quiet spell at once, then no batch sooner than the interval after the last', async () => {
    // Prepare
    const batcher = new OutputBatcher(send);
    // Act
    batcher.append('stdout', 'hello');
    await vi.advanceTimersByTimeAsync(0);
    const first = sent.length;
    batcher.append('stdout', 'again');
    await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS - 1);
    const before = sent.length;
    await vi.advanceTimersByTimeAsync(1);
    // Assess
    expect(first).toBe(1);
    expect(before).toBe(1);
    expect(sent).toHaveLength(2);
  });

  it('sends no batch in a command’s first FIRST_BATCH_MS, then every interval', async () => {
    // Prepare
    const batcher = new OutputBatcher(send, { firstBatchMs: FIRST_BATCH_MS });
    batcher.start();
    // Act
    await vi.advanceTimersByTimeAsync(50);
    batcher.append('stdout', 'first\n');
    await vi.advanceTimersByTimeAsync(FIRST_BATCH_MS - 51);
    const held = sent.length;
    await vi.advanceTimersByTimeAsync(1);
    batcher.append('stdout', 'second\n');
    await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS);
    // Assess
    expect(held).toBe(0);
    expect(sent.map((batch) => batch.map((c) => c.data).join(''))).toEqual(['first\n', 'second\n']);
  });

  it('does not hold the output of a command that has run longer than FIRST_BATCH_MS', async () => {
    // Prepare
    const batcher = new OutputBatcher(send, { firstBatchMs: FIRST_BATCH_MS });
    batcher.start();
    await vi.advanceTimersByTimeAsync(FIRST_BATCH_MS);
    // Act
    batcher.append('stdout', 'later\n');
    await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS);
    // Assess
    expect(sent).toHaveLength(1);
  });

  it('sends nothing on a timer once the output is over: the rest rides the completion', async () => {
    // Prepare
    const batcher = new OutputBatcher(send, { firstBatchMs: FIRST_BATCH_MS });
    batcher.append('stdout', 'ok\n');
    // Act
    batcher.end();
    batcher.append('stdout', 'last\n');
    await vi.advanceTimersByTimeAsync(10 * FIRST_BATCH_MS);
    const rest = await batcher.takeRest();
    // Assess
    expect(sent).toEqual([]);
    expect(rest.map((c) => c.data).join('')).toBe('ok\nlast\n');
  });

  it('sends at once when more than 64 KiB wait, in chunks of at most 64 KiB and requests of at most 256 KiB', async () => {
    // Prepare
    const batcher = new OutputBatcher(send);
    // Act
    batcher.append('stdout', 'x'.repeat(1024 * 1024 + 10));
    await vi.advanceTimersByTimeAsync(0);
    await batcher.flush();
    // Assess
    const chunks = sent.flat();
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.every((c) => utf8Bytes(c.data) <= 64 * 1024)).toBe(true);
    expect(sent.every((request) => request.reduce((n, c) => n + utf8Bytes(c.data), 0) <= 256 * 1024)).toBe(true);
    expect(chunks.map((c) => c.data).join('')).toHaveLength(1024 * 1024 + 10);
    expect(sent.length).toBeGreaterThanOrEqual(5);
  });

  it('sends one request at a time and never changes a chunk once it is on its way', async () => {
    // Prepare
    const releases: (() => void)[] = [];
    const slow = async (chunks: OutputChunk[]) => {
      sent.push(chunks.map((c) => ({ ...c })));
      await new Promise<void>((resolve) => releases.push(resolve));
    };
    const batcher = new OutputBatcher(slow);
    batcher.append('stdout', 'first');
    await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS);
    // Act
    batcher.append('stdout', ' second');
    await vi.advanceTimersByTimeAsync(1000);
    const whileInFlight = sent.length;
    releases.shift()!();
    await vi.advanceTimersByTimeAsync(BATCH_INTERVAL_MS);
    releases.shift()?.();
    await batcher.flush();
    // Assess
    expect(whileInFlight).toBe(1);
    expect(sent).toEqual([
      [{ stream: 'stdout', data: 'first', seq: 0 }],
      [{ stream: 'stdout', data: ' second', seq: 1 }],
    ]);
  });

  it('gives up on the rest when a send fails for good', async () => {
    // Prepare
    const failing = async () => {
      throw new Error('gone');
    };
    const batcher = new OutputBatcher(failing);
    batcher.append('stdout', 'a');
    // Act
    await batcher.flush();
    batcher.append('stdout', 'b');
    await batcher.flush();
    // Assess
    expect((batcher.error as Error).message).toBe('gone');
    expect(batcher.droppedChunks).toBe(2);
  });

  it('hands the rest over for the completion when it fits one request, after a request in flight', async () => {
    // Prepare: one batch on its way, more output behind it
    const releases: (() => void)[] = [];
    const slow = async (chunks: OutputChunk[]) => {
      sent.push(chunks);
      await new Promise<void>((resolve) => releases.push(resolve));
    };
    const batcher = new OutputBatcher(slow);
    batcher.append('stdout', 'first\n');
    await vi.advanceTimersByTimeAsync(0);
    batcher.append('stderr', 'last\n');
    // Act
    const rest = batcher.takeRest();
    await vi.advanceTimersByTimeAsync(0);
    releases.shift()!();
    const tail = await rest;
    await vi.advanceTimersByTimeAsync(1000);
    // Assess: the first went alone, the last is handed over (not sent), and nothing is sent afterwards
    expect(sent).toEqual([[{ stream: 'stdout', data: 'first\n', seq: 0 }]]);
    expect(tail).toEqual([{ stream: 'stderr', data: 'last\n', seq: 1 }]);
    expect(await batcher.takeRest()).toEqual([]);
  });

  it('sends the rest itself when it does not fit one request, and hands over nothing', async () => {
    // Prepare
    const batcher = new OutputBatcher(send, { maxRequestChunks: 2 });
    batcher.append('stdout', 'a');
    batcher.append('stderr', 'b');
    batcher.append('stdout', 'c');
    // Act
    const tail = await batcher.takeRest();
    // Assess
    expect(tail).toEqual([]);
    expect(sent.flat().map((c) => c.data)).toEqual(['a', 'b', 'c']);
  });
});
