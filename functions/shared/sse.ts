// Server-Sent Events framing. The spec's streams send each message as ONE `data:` line of JSON (no `event:`
// field); `id:` lets a client resume with Last-Event-ID; comment lines keep idle connections open.
import { Readable } from 'node:stream';
import type { StreamItem } from '../../domain/streams/ports.js';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** One message. JSON.stringify never emits a raw newline, so `data` stays on one line. */
export const sseMessage = (data: unknown, id?: string | number): string =>
  `${id === undefined ? '' : `id: ${String(id).replace(/[\r\n]/g, '')}\n`}data: ${JSON.stringify(data)}\n\n`;

/** A comment line: ignored by clients, keeps proxies from closing an idle connection. */
export const sseComment = (text: string): string => `: ${text.replace(/[\r\n]/g, ' ')}\n\n`;

/** How long a client waits before reconnecting after the server closes the stream. */
export const sseRetry = (milliseconds: number): string => `retry: ${Math.max(0, Math.trunc(milliseconds))}\n\n`;

/** The frame of one item of a domain stream. */
export const sseFrame = (item: StreamItem): string =>
  item.kind === 'retry'
    ? sseRetry(item.ms)
    : item.kind === 'comment'
      ? sseComment(item.text)
      : sseMessage(item.data, item.id);

/** The frames of a domain stream's items, as they come. */
export async function* sseFrames(items: AsyncIterable<StreamItem>): AsyncGenerator<string> {
  for await (const item of items) yield sseFrame(item);
}

/**
 * The body of an event stream: `produce` yields frames and receives a signal that aborts when the client goes
 * away (or the platform ends the stream), so its waits (`setTimeout(ms, undefined, { signal })`, a queue
 * read) end at once. A generator blocked in an await cannot be stopped by `return()` alone.
 */
export const eventStream = (produce: (signal: AbortSignal) => AsyncIterable<string>): Readable => {
  const controller = new AbortController();
  const iterator = produce(controller.signal)[Symbol.asyncIterator]();
  return new Readable({
    read() {
      iterator.next().then(
        ({ done, value }) => this.push(done ? null : value),
        (error: unknown) => this.destroy(controller.signal.aborted ? undefined : (error as Error)),
      );
    },
    destroy(error, callback) {
      controller.abort();
      Promise.resolve(iterator.return?.())
        .catch(() => undefined)
        .finally(() => callback(error));
    },
  });
};
