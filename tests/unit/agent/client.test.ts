import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AbortedError, AgentClient, HttpError, UnavailableError } from '../../../agent/client.js';

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/** A fetch that plays the given answers in order and records the requests. */
const scripted = (answers: Answer[]) => {
  const calls: { url: string; method: string; authorization: string | undefined; body: unknown }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    const headers = init.headers as Record<string, string>;
    calls.push({
      url,
      method: init.method ?? 'GET',
      authorization: headers['authorization'],
      body: init.body === undefined ? undefined : JSON.parse(String(init.body)),
    });
    const answer = answers.shift();
    if (answer === undefined) throw new Error('no more answers');
    if (answer instanceof Error) throw answer;
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: answer.headers,
    });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls };
};

const refused = () =>
  Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });

let log: string[];
beforeEach(() => {
  vi.useFakeTimers();
  log = [];
});
afterEach(() => {
  vi.useRealTimers();
});

const client = (fetch: typeof globalThis.fetch, onUnauthorized?: (token: string) => Promise<void>) => {
  const c = new AgentClient({
    server: 'http://server/',
    fetch,
    log: (m) => log.push(m),
    random: () => 0,
    ...(onUnauthorized ? { onUnauthorized } : {}),
  });
  c.setToken('dpa_one');
  return c;
};

describe('AgentClient', () => {
  it('retries network errors and 5xx with backoff, logging the outage once and the reconnection once', async () => {
    // Prepare
    const { fetch, calls } = scripted([
      refused(),
      { status: 503 },
      refused(),
      { status: 200, body: { accepted: 1, cancel_requested: false } },
    ]);
    // Act
    const answer = client(fetch).output('c1', [{ stream: 'stdout', data: 'x', seq: 0 }]);
    await vi.advanceTimersByTimeAsync(250 + 500 + 1000);
    // Assess
    await expect(answer).resolves.toEqual({ accepted: 1, cancel_requested: false });
    expect(calls).toHaveLength(4);
    expect(
      calls.every(
        (c) => c.url === 'http://server/api/v1/agent/commands/c1/output' && c.authorization === 'Bearer dpa_one',
      ),
    ).toBe(true);
    expect(log).toHaveLength(2);
    expect(log[0]).toMatch(/cannot reach the server http:\/\/server \(ECONNREFUSED\); retrying with backoff/);
    expect(log[1]).toMatch(/reconnected to the server after/);
  });

  it('waits as long as Retry-After says on 429', async () => {
    // Prepare
    const { fetch, calls } = scripted([
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 200, body: {} },
    ]);
    // Act
    const done = client(fetch).complete('c1', { exit_code: 0, started_at: 'a', completed_at: 'b' });
    await vi.advanceTimersByTimeAsync(1900);
    const before = calls.length;
    await vi.advanceTimersByTimeAsync(100);
    await done;
    // Assess
    expect(before).toBe(1);
    expect(calls).toHaveLength(2);
  });

  it('hands a 401 to onUnauthorized and repeats the call with the new token', async () => {
    // Prepare
    const { fetch, calls } = scripted([
      { status: 401, body: { error: { code: 'INVALID_TOKEN', message: 'no' } } },
      { status: 200, body: { server_time: 'now' } },
    ]);
    const c: AgentClient = client(fetch, async () => c.setToken('dpa_two'));
    // Act
    await c.heartbeat(['a']);
    // Assess
    expect(calls.map((x) => x.authorization)).toEqual(['Bearer dpa_one', 'Bearer dpa_two']);
    expect(calls[0]!.body).toEqual({ running_command_ids: ['a'] });
  });

  it('tells onSignOfLife of an answered poll (as of its sending less the refresh), not of a completion or others', async () => {
    // Prepare: fake time at 100 s
    vi.setSystemTime(100_000);
    const { fetch, calls } = scripted([
      { status: 200, body: { commands: [], cancel: [] } },
      { status: 200, body: {} },
      { status: 200, body: { accepted: 1, cancel_requested: false } },
      { status: 200, body: { server_time: 'now' } },
      { status: 404, body: { error: { code: 'NOT_FOUND', message: 'no such command' } } },
    ]);
    const heard: number[] = [];
    const c = new AgentClient({
      server: 'http://server/',
      fetch,
      log: () => undefined,
      random: () => 0,
      onSignOfLife: (at) => heard.push(at),
    });
    c.setToken('dpa_one');
    const result = { exit_code: 0, started_at: 'a', completed_at: 'b' } as never;
    // Act
    await c.poll(0, 1, new AbortController().signal);
    await c.complete('c-1', result);
    await c.output('c-1', [{ seq: 0, stream: 'stdout', data: 'x', timestamp: 'a' }] as never);
    await c.heartbeat([]);
    await c.complete('c-2', result).catch(() => undefined);
    // Assess: the poll only (a completion says it is none, and output is none)
    expect(heard).toEqual([95_000]);
    expect(calls[1]!.body).toEqual({ ...(result as object), sign_of_life: false });
  });

  it('turns 404 and 409 into HttpErrors without retrying', async () => {
    // Prepare
    const { fetch, calls } = scripted([
      { status: 404, body: { error: { code: 'NOT_FOUND', message: 'no such command' } } },
      { status: 409, body: { error: { code: 'CONFLICT', message: 'done' } } },
    ]);
    const c = client(fetch);
    // Act
    const notFound = c.complete('c1', { exit_code: 0, started_at: 'a', completed_at: 'b' }).catch((e: unknown) => e);
    const conflict = c.complete('c1', { exit_code: 0, started_at: 'a', completed_at: 'b' }).catch((e: unknown) => e);
    // Assess
    expect(await notFound).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'no such command' });
    expect(await conflict).toBeInstanceOf(HttpError);
    expect(calls).toHaveLength(2);
  });

  it('tries a heartbeat once and stops retrying when the signal aborts', async () => {
    // Prepare
    const { fetch } = scripted([refused(), refused(), refused()]);
    const c = client(fetch);
    const controller = new AbortController();
    // Act
    const heartbeat = c.heartbeat([]).catch((e: unknown) => e);
    const poll = c.poll(20, 1, controller.signal).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    // Assess
    expect(await heartbeat).toBeInstanceOf(UnavailableError);
    expect(await poll).toBeInstanceOf(AbortedError);
  });

  it('gives enrollment up after the time it was given', async () => {
    // Prepare
    const { fetch, calls } = scripted(Array.from({ length: 20 }, () => refused()));
    // Act
    const register = client(fetch)
      .register(
        {
          enrollment_token: 'det',
          name: 'n',
          hostname: 'h',
          os: 'linux',
          arch: 'x64',
          agent_version: '1.0.0',
          tags: [],
        },
        1000,
      )
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5000);
    // Assess
    expect(await register).toBeInstanceOf(UnavailableError);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThan(5);
    expect(calls[0]!.authorization).toBeUndefined();
  });
});
