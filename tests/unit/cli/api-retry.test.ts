// The CLI retries a create that carries an Idempotency-Key (network error, 5xx) with the same key, at most 3 times,
// never on a 4xx but the 409 of a key still in progress, which it waits out; a POST without a key is never retried.
import { describe, expect, it } from 'vitest';
import { createApi } from '../../../cli/api.js';

const IN_PROGRESS = '{"error":{"code":"CONFLICT","message":"in progress","details":{"header":"Idempotency-Key"}}}';

const fakeFetch = (answers: readonly (number | 'network' | 'in_progress')[]) => {
  const keys: (string | undefined)[] = [];
  const impl = (async (_url: string, init: RequestInit) => {
    keys.push((init.headers as Record<string, string>)['idempotency-key']);
    const next = answers[keys.length - 1] ?? 201;
    if (next === 'network') throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    if (next === 'in_progress') return new Response(IN_PROGRESS, { status: 409 });
    const body = next < 300 ? '{"deployment_id":"d1"}' : '{"error":{"code":"SERVICE_UNAVAILABLE","message":"down"}}';
    return new Response(body, { status: next });
  }) as unknown as typeof fetch;
  return { impl, keys };
};
const noWait = async () => undefined;

describe('a keyed create', () => {
  it('is retried after a network error and a 503 with the same key, and answers the 201', async () => {
    const { impl, keys } = fakeFetch(['network', 503, 201]);
    const api = createApi('http://x', undefined, noWait, impl);

    const created = await api.request('POST', '/deployments', { body: {}, headers: { 'idempotency-key': 'k1' } });

    expect(created.status).toBe(201);
    expect(keys).toEqual(['k1', 'k1', 'k1']);
  });

  it('is retried at most 3 times', async () => {
    const { impl, keys } = fakeFetch([500, 500, 500, 500, 201]);
    const api = createApi('http://x', undefined, noWait, impl);

    await expect(
      api.request('POST', '/deployments', { body: {}, headers: { 'idempotency-key': 'k2' } }),
    ).rejects.toThrow(/500/);
    expect(keys).toHaveLength(4);
  });

  it('is not retried on a 4xx', async () => {
    const { impl, keys } = fakeFetch([409]);
    const api = createApi('http://x', undefined, noWait, impl);

    await expect(
      api.request('POST', '/deployments', { body: {}, headers: { 'idempotency-key': 'k3' } }),
    ).rejects.toThrow();
    expect(keys).toHaveLength(1);
  });

  it('waits out a 409 "still in progress" of its own key (a cut earlier attempt), then takes the first answer', async () => {
    const { impl, keys } = fakeFetch([503, 'in_progress', 'in_progress', 'in_progress', 'in_progress', 201]);
    const waits: number[] = [];
    const api = createApi('http://x', undefined, async (ms: number) => void waits.push(ms), impl);

    const created = await api.request('POST', '/deployments', { body: {}, headers: { 'idempotency-key': 'k4' } });

    expect(created.status).toBe(201);
    expect(keys).toEqual(['k4', 'k4', 'k4', 'k4', 'k4', 'k4']);
    expect(waits.slice(1)).toEqual([2000, 2000, 2000, 2000]);
  });

  it('without a key, a POST is not retried (as before)', async () => {
    const { impl, keys } = fakeFetch([503, 201]);
    const api = createApi('http://x', undefined, noWait, impl);

    await expect(api.request('POST', '/deployments', { body: {} })).rejects.toThrow(/503/);
    expect(keys).toHaveLength(1);
  });
});
