import { describe, expect, it } from 'vitest';
import type { Api } from '../../../cli/api.js';
import { followDeployment, Reconnect, streamPath, type StreamEvent } from '../../../cli/follow.js';
import { SseParser } from '../../../cli/sse.js';

describe('SseParser', () => {
  it('joins data lines, keeps the last id across messages, ignores comments and handles split chunks and CRLF', () => {
    const parser = new SseParser();
    const messages = [
      ...parser.push('retry: 2000\n\ndata: {"event":"ping"}\n\n: a comment\nid: 1\nda'),
      ...parser.push('ta: one\r\ndata: two\r\n\r'),
      ...parser.push('\ndata: three\n\n'),
    ];
    expect(messages.map((m) => [m.data, m.lastEventId])).toEqual([
      ['{"event":"ping"}', undefined],
      ['one\ntwo', '1'],
      ['three', '1'],
    ]);
    expect(parser.retryMs).toBe(2000);
    expect(parser.lastEventId).toBe('1');
  });

  it('dispatches nothing for a blank line without data, and strips one leading space only', () => {
    const parser = new SseParser('7');
    expect(parser.push('\n\ndata:  spaced\n\n')).toEqual([{ data: ' spaced', lastEventId: '7', event: 'message' }]);
  });
});

describe('resume bookkeeping', () => {
  it('builds the stream path with last_event_id once there is one', () => {
    expect(streamPath('d1', 'tok', undefined)).toBe('/deployments/d1/logs?sse_token=tok');
    expect(streamPath('d1', 'to k', '12')).toBe('/deployments/d1/logs?sse_token=to%20k&last_event_id=12');
  });

  it('backs off while nothing arrives, starts over after an event, gives up after maxFailures', () => {
    const reconnect = new Reconnect(3, 100, 300);
    expect([reconnect.dropped(), reconnect.dropped()]).toEqual([100, 200]);
    reconnect.progressed();
    expect([reconnect.dropped(), reconnect.dropped(), reconnect.dropped(), reconnect.dropped()]).toEqual([
      100,
      200,
      300,
      undefined,
    ]);
  });

  it('after a dropped stream asks for a new token and resumes after the last id seen; ends on the terminal event', async () => {
    const frame = (id: number, event: StreamEvent) => `id: ${id}\ndata: ${JSON.stringify(event)}\n\n`;
    const log = (message: string): StreamEvent => ({ event: 'log', data: { type: 'log', log: { message } } });
    const streams = [
      // The first connection: two events, then the connection is cut mid-message.
      [frame(1, log('a')), frame(2, log('b')), 'id: 3\ndata: {"ev'],
      [frame(3, log('c')), frame(4, { event: 'state_change', data: { type: 'state_change', new_state: 'success' } })],
    ];
    const paths: string[] = [];
    let tokens = 0;
    let gets = 0;
    const api = {
      baseUrl: 'http://svc',
      post: async () => ({ sse_token: `tok-${(tokens += 1)}` }),
      get: async () => ({ id: 'd1', state: (gets += 1) === 1 ? 'running' : 'success' }),
      request: async () => ({ status: 200, body: undefined }),
      stream: async (path: string) => {
        paths.push(path);
        const chunks = streams.shift() ?? [];
        const cut = paths.length === 1;
        return new Response(
          new ReadableStream({
            pull(controller) {
              const chunk = chunks.shift();
              if (chunk !== undefined) controller.enqueue(new TextEncoder().encode(chunk));
              else if (cut) controller.error(new TypeError('terminated'));
              else controller.close();
            },
          }),
        );
      },
    } as unknown as Api;
    const seen: string[] = [];
    const resumed: (string | undefined)[] = [];
    const final = await followDeployment(api, 'd1', {
      onEvent: (e) => seen.push(e.event === 'log' ? String((e.data['log'] as { message: string }).message) : e.event),
      onReconnect: (last) => resumed.push(last),
      wait: async () => undefined,
    });
    expect(seen).toEqual(['a', 'b', 'c', 'state_change']);
    expect(paths).toEqual([
      '/deployments/d1/logs?sse_token=tok-1',
      '/deployments/d1/logs?sse_token=tok-2&last_event_id=2',
    ]);
    expect(resumed).toEqual(['2']);
    expect(final).toEqual({ id: 'd1', state: 'success' });
  });
});
