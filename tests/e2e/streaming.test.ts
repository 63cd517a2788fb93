// The streaming path end to end: a response-streaming handler (middy streamify mode, run by the local stand-in
// of the Lambda runtime) -> the front on the single origin -> an EventSource client. Each event must reach the
// client while the handler is still waiting to write the next one: nothing on the way buffers.
import { setTimeout as sleep } from 'node:timers/promises';
import { EventSource } from 'eventsource';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStream, sseComment, sseMessage, SSE_HEADERS } from '../../functions/shared/sse.js';
import { stream, streamRouter } from '../../functions/shared/stream.js';
import { installLambdaStreamingShim } from '../../local/lambda-streaming.js';
import { startStack, type Stack } from '../../local/stack.js';
import { testShell } from '../fakes/shell.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

const gates = [deferred(), deferred()];
const handlerFinished = deferred();
const writtenAt: number[] = [];

const testStream = stream(
  {
    operationId: 'test_stream',
    summary: 'test',
    tags: [],
    permission: 'public',
    params: v.object({ resource_type: v.picklist(['numbers']) }),
    responses: { 200: { description: 'events' } },
  },
  async ({ headers }) => {
    const resumeFrom = Number(headers['last-event-id'] ?? 0);
    async function* events(signal: AbortSignal) {
      try {
        yield sseComment('open');
        for (let n = resumeFrom + 1; n <= 3; n += 1) {
          if (resumeFrom === 0 && n > 1) await gates[n - 2]!.promise; // written only after the client saw n - 1
          writtenAt.push(Date.now());
          yield sseMessage({ event: 'number', data: { type: 'number', n } }, n);
        }
        await sleep(60_000, undefined, { signal }); // stays open until the client leaves
      } finally {
        handlerFinished.resolve();
      }
    }
    return { statusCode: 200, headers: SSE_HEADERS, body: eventStream(events) };
  },
);

let stack: Stack;

beforeAll(async () => {
  installLambdaStreamingShim();
  const router = streamRouter(
    [{ method: 'GET', path: '/api/v1/sse/{resource_type}', handler: testStream }],
    testShell(),
  );
  stack = await startStack({ port: 0, streamHandler: router as never });
});

afterAll(async () => {
  await stack?.stop();
});

describe('streaming through the front', () => {
  it('delivers each event as it is written, and ends the handler when the client leaves', async () => {
    // Prepare
    const received: { n: number; id: string; at: number }[] = [];
    const source = new EventSource(`${stack.baseUrl}/api/v1/sse/numbers`);
    const done = deferred();
    source.onmessage = (message) => {
      const { data } = JSON.parse(message.data) as { event: string; data: { n: number } };
      received.push({ n: data.n, id: message.lastEventId, at: Date.now() });
      if (data.n < 3) gates[data.n - 1]!.resolve();
      else done.resolve();
    };
    // Act
    await done.promise;
    source.close();
    // Assess
    expect(received.map((r) => [r.n, r.id])).toEqual([
      [1, '1'],
      [2, '2'],
      [3, '3'],
    ]);
    for (let i = 1; i < 3; i += 1) expect(received[i - 1]!.at).toBeLessThanOrEqual(writtenAt[i]!);
    await expect(
      Promise.race([
        handlerFinished.promise.then(() => 'finished'),
        new Promise((r) => setTimeout(() => r('still running'), 5_000)),
      ]),
    ).resolves.toBe('finished');
  });

  it('passes Last-Event-ID through, so a client can resume', async () => {
    const controller = new AbortController();
    const response = await fetch(`${stack.baseUrl}/api/v1/sse/numbers`, {
      headers: { 'last-event-id': '2' },
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('data:')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).toContain('id: 3\ndata: {"event":"number","data":{"type":"number","n":3}}\n\n');
    expect(text).not.toContain('"n":1');
  });

  it('answers validation errors as a JSON envelope before streaming', async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/sse/letters`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'resource_type' }] } },
    });
  });
});
