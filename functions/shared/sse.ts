// Server-Sent Events framing. The spec's streams send each message as ONE `data:` line of JSON (no `event:`
// field); `id:` lets a client resume with Last-Event-ID; comment lines keep idle connections open.

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
