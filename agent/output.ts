// A command's output on its way to the server: secret values masked before anything leaves the host, then cut
// into ordered chunks (one seq counter for both streams) and sent in batches, in order, each batch retried until
// accepted before the next one goes. A batch never exceeds what the server takes in one request: 100 chunks,
// 5000 lines (a chunk with more lines is cut at line breaks) and 256 KiB of data (the server allows 1 MiB).
import type { OutputChunk, OutputStream } from '../protocol/messages.js';
import { lineCount, MAX_OUTPUT_CHUNKS, MAX_OUTPUT_LINES } from '../protocol/output-limits.js';

export const MASK = '***';
export const MAX_CHUNK_BYTES = 64 * 1024;
export const MAX_REQUEST_BYTES = 256 * 1024;
/**
 * A running command's next batch goes this long after the previous one left (or when the previous is answered, if
 * later): one post in flight, so a slow server gets bigger batches, not more requests. 50 ms since 2026-11-28 (was
 * 100): a line reaches a viewer in p50 ~85 ms instead of ~170 locally, for at most 20 posts a second per chatty
 * command (docs/cost.md, "agent output → browser").
 */
export const BATCH_INTERVAL_MS = 50;
/**
 * No batch goes before a command has run this long (its process started; later batches every BATCH_INTERVAL_MS): a
 * short command that ends by then sends its output with its completion, one request instead of two. Only lines a
 * command prints in its first FIRST_BATCH_MS reach viewers later than the rest (by FIRST_BATCH_MS -
 * BATCH_INTERVAL_MS at most); a long command's output is not held after that.
 */
export const FIRST_BATCH_MS = 250;
/** Cuts text after every `maxLines`-th line break, so no piece has more than `maxLines` lines. */
export const splitLines = (text: string, maxLines: number): string[] => {
  const pieces: string[] = [];
  let start = 0;
  let breaks = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    breaks += 1;
    if (breaks === maxLines) {
      pieces.push(text.slice(start, i + 1));
      start = i + 1;
      breaks = 0;
    }
  }
  if (start < text.length || pieces.length === 0) pieces.push(text.slice(start));
  return pieces;
};

/**
 * Replaces every occurrence of a secret value with `***`. Output arrives in pieces, so a tail that could be the
 * start of a secret is held back until the next piece (or the end) shows whether it is one.
 */
export class SecretMasker {
  private readonly secrets: readonly string[];
  private readonly longest: number;
  private held = '';

  constructor(secrets: Iterable<string>) {
    // Longest first: where two secrets start at the same place, the longer one is masked whole.
    this.secrets = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
    this.longest = this.secrets[0]?.length ?? 0;
  }

  /** The text that is safe to send now. */
  push(text: string): string {
    if (this.secrets.length === 0) return text;
    return this.mask(this.held + text, false);
  }

  /** Everything still held back, masked: call once when the stream ends. */
  end(): string {
    const rest = this.held;
    this.held = '';
    return rest === '' ? '' : this.mask(rest, true);
  }

  private mask(text: string, final: boolean): string {
    const hold = final ? -1 : this.holdFrom(text);
    const limit = hold === -1 ? text.length : hold;
    let out = '';
    let pos = 0;
    for (;;) {
      const match = this.firstMatch(text, pos);
      // A match that starts at or after the held tail waits too: a longer secret may begin there.
      if (match === undefined || match.index >= limit) break;
      out += `${text.slice(pos, match.index)}${MASK}`;
      pos = match.index + match.length;
    }
    if (pos >= limit) {
      this.held = final ? '' : text.slice(pos);
      return out;
    }
    this.held = final ? '' : text.slice(limit);
    return out + text.slice(pos, limit);
  }

  private firstMatch(text: string, from: number): { index: number; length: number } | undefined {
    let best: { index: number; length: number } | undefined;
    for (const secret of this.secrets) {
      const index = text.indexOf(secret, from);
      if (index !== -1 && (best === undefined || index < best.index)) best = { index, length: secret.length };
    }
    return best;
  }

  /** Where the tail that could be an unfinished secret starts, or -1. */
  private holdFrom(text: string): number {
    for (let i = Math.max(0, text.length - this.longest + 1); i < text.length; i++) {
      const tail = text.slice(i);
      if (this.secrets.some((s) => s.length > tail.length && s.startsWith(tail))) return i;
    }
    return -1;
  }
}

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Cuts text into pieces of at most `maxBytes` UTF-8 bytes each, never inside a character. */
export const splitUtf8 = (text: string, maxBytes: number): string[] => {
  if (utf8Bytes(text) <= maxBytes) return [text];
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < text.length;) {
    const code = text.codePointAt(i)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    const units = code >= 0x10000 ? 2 : 1;
    if (bytes + width > maxBytes) {
      pieces.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += width;
    i += units;
  }
  pieces.push(text.slice(start));
  return pieces;
};

export interface BatcherOptions {
  readonly intervalMs?: number;
  /** No batch before this long after `start()` (or the first output): commands FIRST_BATCH_MS; default none. */
  readonly firstBatchMs?: number;
  readonly maxChunkBytes?: number;
  readonly maxRequestBytes?: number;
  readonly maxRequestChunks?: number;
  readonly maxRequestLines?: number;
}

interface Pending {
  chunk: OutputChunk;
  bytes: number;
  lines: number;
}

/**
 * Orders output into chunks and sends them: a batch goes at most every `intervalMs`, or at once when more than
 * `maxChunkBytes` are waiting. One request at a time, in seq order; `send` retries on its own and throws only
 * when the output can no longer be delivered, after which the rest is dropped.
 */
export class OutputBatcher {
  private readonly intervalMs: number;
  /** How long after the start no batch goes (firstBatchMs). */
  private readonly firstBatchMs: number;
  /** No timed batch before this (ms since the epoch); set by start() or the first output. */
  private firstBatchAt: number | undefined;
  /** The output is over (the process ended): no more timed batches, the rest waits for takeRest or flush. */
  private over = false;
  private readonly maxChunkBytes: number;
  private readonly maxRequestBytes: number;
  private readonly maxRequestChunks: number;
  private readonly maxRequestLines: number;
  private readonly queue: Pending[] = [];
  private nextSeq = 0;
  /** How many chunks at the head of the queue are being sent (they must not change any more). */
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private due = false;
  /** When the last batch went: the next goes no sooner than intervalMs after it (a line after a quiet spell at once). */
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private flushing = false;
  private sending: Promise<void> | undefined;
  private failure: unknown;
  private dropped = 0;

  constructor(
    private readonly send: (chunks: OutputChunk[]) => Promise<void>,
    options: BatcherOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? BATCH_INTERVAL_MS;
    this.firstBatchMs = options.firstBatchMs ?? 0;
    this.maxChunkBytes = options.maxChunkBytes ?? MAX_CHUNK_BYTES;
    this.maxRequestBytes = options.maxRequestBytes ?? MAX_REQUEST_BYTES;
    this.maxRequestChunks = options.maxRequestChunks ?? MAX_OUTPUT_CHUNKS;
    this.maxRequestLines = options.maxRequestLines ?? MAX_OUTPUT_LINES;
  }

  /** The error that stopped delivery, if any. */
  get error(): unknown {
    return this.failure;
  }

  /** Chunks given up on (delivery failed, or abandoned). */
  get droppedChunks(): number {
    return this.dropped;
  }

  /** Chunks numbered so far (the next seq). */
  get chunkCount(): number {
    return this.nextSeq;
  }

  append(stream: OutputStream, data: string): void {
    if (data === '') return;
    if (this.failure !== undefined) {
      this.dropped += 1;
      return;
    }
    for (const piece of splitUtf8(data, this.maxChunkBytes).flatMap((p) => splitLines(p, this.maxRequestLines))) {
      const bytes = utf8Bytes(piece);
      const last = this.queue.length > this.inFlight ? this.queue[this.queue.length - 1] : undefined;
      const merged =
        last === undefined || last.chunk.stream !== stream || last.bytes + bytes > this.maxChunkBytes
          ? undefined
          : lineCount(last.chunk.data + piece);
      if (last !== undefined && merged !== undefined && merged <= this.maxRequestLines) {
        last.chunk = { ...last.chunk, data: last.chunk.data + piece };
        last.bytes += bytes;
        last.lines = merged;
      } else {
        this.queue.push({ chunk: { stream, data: piece, seq: this.nextSeq++ }, bytes, lines: lineCount(piece) });
      }
    }
    this.firstBatchAt ??= Date.now() + this.firstBatchMs;
    if (this.waitingBytes() > this.maxChunkBytes) this.kick();
    else if (!this.over) this.timer ??= setTimeout(() => this.kick(), this.nextBatchIn());
  }

  /** The command's process started now: no timed batch for firstBatchMs from here. */
  start(): void {
    this.firstBatchAt ??= Date.now() + this.firstBatchMs;
  }

  /**
   * The output is over (the command's process ended): what is waiting is not sent on a timer any more, so it can
   * ride the completion (takeRest), even when the agent is slow to get there (a request in flight still finishes).
   */
  end(): void {
    this.over = true;
    this.clearTimer();
  }

  /** Sends everything now; resolves when all of it was accepted, or delivery failed (see `error`). */
  async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0 && this.failure === undefined) {
      this.kick();
      await this.sending;
    }
  }

  /**
   * Once the output is over: waits for a request in flight, then hands over what is left (and forgets it) when it
   * fits one request, to be sent with the completion; else sends it all as `flush` does and answers nothing.
   */
  async takeRest(): Promise<OutputChunk[]> {
    while (this.sending !== undefined) await this.sending;
    this.clearTimer();
    if (this.failure !== undefined) return [];
    let bytes = 0;
    let lines = 0;
    for (const pending of this.queue) {
      bytes += pending.bytes;
      lines += pending.lines;
    }
    if (this.queue.length > this.maxRequestChunks || bytes > this.maxRequestBytes || lines > this.maxRequestLines) {
      await this.flush();
      return [];
    }
    return this.queue.splice(0).map((p) => p.chunk);
  }

  /** Gives up on whatever is not sent yet (the caller could not wait any longer). */
  abandon(reason: unknown): void {
    this.failure ??= reason;
    this.clearTimer();
    this.dropped += this.queue.length - this.inFlight;
    this.queue.splice(this.inFlight);
  }

  private waitingBytes(): number {
    let total = 0;
    for (let i = this.inFlight; i < this.queue.length; i++) total += this.queue[i]!.bytes;
    return total;
  }

  /** How long until the next batch may go: after the first-batch hold, and intervalMs after the last batch. */
  private nextBatchIn(): number {
    const now = Date.now();
    return Math.max(0, (this.firstBatchAt ?? now) - now, this.lastSentAt + this.intervalMs - now);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private kick(): void {
    this.clearTimer();
    this.due = true;
    this.sending ??= this.drain().finally(() => {
      this.sending = undefined;
      if (this.queue.length > 0 && this.failure === undefined && !this.over)
        this.timer ??= setTimeout(() => this.kick(), this.nextBatchIn());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && this.failure === undefined && (this.due || this.flushing)) {
      this.due = false;
      let bytes = 0;
      let lines = 0;
      let count = 0;
      const fits = (next: Pending) =>
        bytes + next.bytes <= this.maxRequestBytes &&
        lines + next.lines <= this.maxRequestLines &&
        count < this.maxRequestChunks;
      while (count < this.queue.length && (count === 0 || fits(this.queue[count]!))) {
        bytes += this.queue[count]!.bytes;
        lines += this.queue[count]!.lines;
        count += 1;
      }
      this.inFlight = count;
      this.lastSentAt = Date.now();
      try {
        await this.send(this.queue.slice(0, count).map((p) => p.chunk));
      } catch (error) {
        this.failure = error;
        this.dropped += this.queue.length;
        this.queue.length = 0;
        this.clearTimer();
        return;
      } finally {
        this.inFlight = 0;
      }
      this.queue.splice(0, count);
      if (this.waitingBytes() > this.maxChunkBytes) this.due = true;
    }
  }
}
