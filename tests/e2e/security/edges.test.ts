// Attack tests over HTTP against the real local stack: event streams are bounded per user (the 11th is refused
// before it opens, with the general limiter's plain-text 429) and an open stream ends within 10 s of logout,
// deactivation of its user, revocation of the API key it was opened with, or a reused refresh token of its session.
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../../support/http.js';
import { createUser } from '../../support/users.js';
import { useStack } from '../../support/stack-fixture.js';

const e2e = useStack('sec-edges');
const open: AbortController[] = [];

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token: string | undefined, body?: unknown) =>
  api.call(method, `/api/v1${path}`, token === undefined ? { body } : { token, body });

/** Opens /sse/targets with a fresh SSE token of `credential`; the response once its headers arrived. */
const openStream = async (credential: string) => {
  const issued = await call('POST', '/auth/sse-token', credential, {});
  expect(issued.status).toBe(200);
  const controller = new AbortController();
  open.push(controller);
  const response = await fetch(
    `${e2e.stack.baseUrl}/api/v1/sse/targets?sse_token=${encodeURIComponent(issued.json.sse_token)}`,
    { signal: controller.signal },
  );
  return { response, controller };
};

/** Reads the stream until the server ends it; how long that took from `since`, and what it sent. */
const endOf = async (response: Response, since: number, withinMs = 20_000) => {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = setTimeout(() => void reader.cancel(), withinMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
  } finally {
    clearTimeout(deadline);
  }
  return { afterMs: Date.now() - since, text };
};

const userWith = async (name: string) => {
  const email = `${name}@example.com`;
  const id = await createUser(email, `${name}-password`, ['admin']);
  return { id, token: (await api.login({ email, password: `${name}-password` })).token };
};

afterEach(() => {
  for (const controller of open.splice(0)) controller.abort();
});

describe('open streams per user', () => {
  it(
    'refuses the 11th stream of a user with 429 before it opens, and frees the slot when one closes',
    { timeout: 120_000 },
    async () => {
      // Prepare: ten open streams
      const user = await userWith('streamer');
      const streams = [];
      for (let i = 0; i < 10; i += 1) streams.push(await openStream(user.token));
      expect(streams.map((s) => s.response.status)).toEqual(Array(10).fill(200));
      // Act
      const eleventh = await openStream(user.token);
      // Assess: refused with the general limiter's convention, while another user still gets one
      expect(eleventh.response.status).toBe(429);
      expect(eleventh.response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(Number(eleventh.response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await eleventh.response.text()).toMatch(/at most 10 event streams/);
      expect((await openStream(e2e.admin)).response.status).toBe(200);
      // A closed stream gives its slot back (released when the server notices the client left)
      streams[0]!.controller.abort();
      let reopened = 0;
      for (let attempt = 0; attempt < 20 && reopened !== 200; attempt += 1) {
        await new Promise((r) => setTimeout(r, 500));
        const again = await openStream(user.token);
        reopened = again.response.status;
        if (reopened !== 200) again.controller.abort();
      }
      expect(reopened).toBe(200);
    },
  );
});

describe('an open stream ends within 10 s when its credential stops being valid', () => {
  it('after logout', { timeout: 60_000 }, async () => {
    const user = await userWith('leaver');
    const { response } = await openStream(user.token);
    expect(response.status).toBe(200);
    const since = Date.now();
    expect((await call('POST', '/auth/logout', user.token, {})).status).toBeLessThan(300);
    const end = await endOf(response, since);
    expect(end.afterMs).toBeLessThan(10_000);
    expect(end.text).toContain('no longer valid');
  });

  it('after the user is deactivated', { timeout: 60_000 }, async () => {
    const user = await userWith('deactivated');
    const { response } = await openStream(user.token);
    expect(response.status).toBe(200);
    const since = Date.now();
    expect((await call('PATCH', `/admin/users/${user.id}`, e2e.admin, { status: 'inactive' })).status).toBe(200);
    const end = await endOf(response, since);
    expect(end.afterMs).toBeLessThan(10_000);
    expect(end.text).toContain('no longer valid');
  });

  it('after the API key it was opened with is revoked', { timeout: 60_000 }, async () => {
    const created = await call('POST', '/auth/api-keys', e2e.admin, { name: 'streams', scopes: ['targets:read'] });
    expect(created.status).toBe(201);
    const { response } = await openStream(created.json.full_key);
    expect(response.status).toBe(200);
    const since = Date.now();
    expect((await call('DELETE', `/auth/api-keys/${created.json.api_key.id}`, e2e.admin)).status).toBeLessThan(300);
    const end = await endOf(response, since);
    expect(end.afterMs).toBeLessThan(10_000);
    expect(end.text).toContain('no longer valid');
  });

  it(
    'after its SSE session was ended by a reused refresh token (the token minted from it is dead too)',
    {
      timeout: 60_000,
    },
    async () => {
      const user = await userWith('replayed');
      const first = await call('POST', '/auth/sse-token', user.token, {});
      expect(first.status).toBe(200);
      const controller = new AbortController();
      open.push(controller);
      const stream = `${e2e.stack.baseUrl}/api/v1/sse/targets?sse_token=`;
      const response = await fetch(`${stream}${encodeURIComponent(first.json.sse_token)}`, {
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const session = { session_id: first.json.session_id };
      const renewed = await call('POST', '/auth/sse-token/refresh', undefined, {
        ...session,
        refresh_token: first.json.refresh_token,
      });
      expect(renewed.status).toBe(200);

      // The attack: the retired refresh token, replayed
      const since = Date.now();
      const replay = await call('POST', '/auth/sse-token/refresh', undefined, {
        ...session,
        refresh_token: first.json.refresh_token,
      });
      expect([replay.status, replay.json.error.code]).toEqual([401, 'INVALID_TOKEN']);

      // The session and its family are over: the current refresh token, the token minted from it, the open stream
      const current = await call('POST', '/auth/sse-token/refresh', undefined, {
        ...session,
        refresh_token: renewed.json.refresh_token,
      });
      expect([current.status, current.json.error.code]).toEqual([401, 'INVALID_TOKEN']);
      const minted = await fetch(`${stream}${encodeURIComponent(renewed.json.sse_token)}`);
      expect(minted.status).toBe(401);
      expect(((await minted.json()) as { error: { code: string } }).error.code).toBe('INVALID_TOKEN');
      const end = await endOf(response, since);
      expect(end.afterMs).toBeLessThan(10_000);
      expect(end.text).toContain('no longer valid');
      // The user's own credential is untouched: a new SSE session works
      expect((await call('POST', '/auth/sse-token', user.token, {})).status).toBe(200);
    },
  );

  it('keeps streaming while the credential stays valid', { timeout: 60_000 }, async () => {
    const user = await userWith('stayer');
    const { response } = await openStream(user.token);
    const end = await endOf(response, Date.now(), 8_000); // cut by the client after 8 s: the server did not end it
    expect(end.afterMs).toBeGreaterThanOrEqual(7_500);
    expect(end.text).not.toContain('no longer valid');
  });
});
