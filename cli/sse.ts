// Server-Sent Events, the few lines of the WHATWG parsing rules the deployment log stream needs: `data:` lines
// joined by \n, `id:` remembered (the resume point), `retry:`, comments ignored, a blank line dispatches.

export interface SseMessage {
  readonly data: string;
  /** The last id seen so far (the stream's, not only this message's), as EventSource keeps it. */
  readonly lastEventId: string | undefined;
  readonly event: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  /** An `id:` of the message being read: it counts only once the message is complete (a cut one is read again). */
  private pendingId: string | undefined;
  /** The id to resume from (`last_event_id`): the last complete message's `id:`, kept across messages. */
  lastEventId: string | undefined;
  /** The server's `retry:` hint, in milliseconds. */
  retryMs: number | undefined;

  constructor(lastEventId?: string) {
    this.lastEventId = lastEventId;
  }

  /** A new connection: whatever part of a message the old one cut off is dropped; the resume point stays. */
  reset(): void {
    this.buffer = '';
    this.data = [];
    this.event = '';
    this.pendingId = undefined;
  }

  /** Feeds a chunk of text; answers the messages it completed. */
  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const messages: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      if (match === null || (match[0] === '\r' && match.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message !== undefined) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') {
      if (this.pendingId !== undefined) this.lastEventId = this.pendingId;
      this.pendingId = undefined;
      if (this.data.length === 0) {
        this.event = '';
        return undefined;
      }
      const message = { data: this.data.join('\n'), lastEventId: this.lastEventId, event: this.event || 'message' };
      this.data = [];
      this.event = '';
      return message;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.pendingId = value;
    else if (field === 'event') this.event = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    return undefined;
  }
}

/** The messages of a response body, in order; ends when the body ends. */
export async function* readSse(body: ReadableStream<Uint8Array>, parser: SseParser): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
}
