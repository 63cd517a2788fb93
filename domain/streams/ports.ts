// What the live streams (a deployment's log, the resource changes) produce and what they need from the runtime:
// items the HTTP side frames as Server-Sent Events, and the waits, timers and warnings the poll loops use (the
// domain has no timers or logger of its own; functions/ passes Node's and the Lambda logger).

/** One thing a stream sends: a reconnect hint, a message (with its `id:` when it has one), or a comment line. */
export type StreamItem =
  | { readonly kind: 'retry'; readonly ms: number }
  | { readonly kind: 'message'; readonly data: unknown; readonly id?: string | number | undefined }
  | { readonly kind: 'comment'; readonly text: string };

export const retryItem = (ms: number): StreamItem => ({ kind: 'retry', ms });
export const messageItem = (data: unknown, id?: string | number): StreamItem => ({ kind: 'message', data, id });
export const commentItem = (text: string): StreamItem => ({ kind: 'comment', text });

/** Waits `milliseconds`, or rejects at once when `signal` aborts. */
export type Sleep = (milliseconds: number, signal: AbortSignal) => Promise<void>;

/** Calls `tick` every `milliseconds` until the answered stop is called. */
export type Every = (milliseconds: number, tick: () => void) => () => void;

/** A warning for the operators' log (a store read failed, a re-check failed). */
export type Warn = (message: string, fields: Readonly<Record<string, unknown>>) => void;

/** What a poll loop needs from the runtime. */
export interface PollRuntime {
  readonly wait: Sleep;
  readonly warn: Warn;
}

/** The message of a failure, for a warning. */
export const failureText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
