// The resource streams (GET /api/v1/sse/{resource_type}) over the local stack: targets enrolled, renamed and
// deleted over HTTP seen as created, updated and deleted; the spec's framing on the raw text; the single-use
// sse_token; an unknown type; tenant scoping; a snapshot; and a deployment seen created then cancelled.
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDeployment } from '../../domain/deployments/start.js';
import { aDraft } from '../fakes/deployments.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('sse');
const sources: EventSource[] = [];

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

const sseToken = async (token = e2e.admin): Promise<string> => {
  const issued = await call('POST', '/auth/sse-token', token, {});
  expect(issued.status).toBe(200);
  return issued.json.sse_token;
};

const streamUrl = (resourceType: string, query: string) => `${e2e.stack.baseUrl}/api/v1/sse/${resourceType}?${query}`;
const errorCode = async (response: Response): Promise<string> =>
  ((await response.json()) as { error: { code: string } }).error.code;

/** A target enrolled as an agent would enroll it (global unless `tenantId`). */
const enroll = async (name: string, tenantId?: string): Promise<string> => {
  const token = await call(
    'POST',
    '/targets/enrollment-tokens',
    e2e.admin,
    tenantId === undefined ? {} : { tenant_id: tenantId },
  );
  expect(token.status).toBe(201);
  const reply = await call('POST', '/agent/register', undefined, {
    enrollment_token: token.json.token,
    name,
    hostname: name,
    os: 'linux',
    arch: 'x64',
    agent_version: '1.0.0',
    tags: [],
  });
  expect(reply.status).toBe(201);
  return reply.json.target_id;
};

interface Received {
  readonly id: string;
  readonly event: string;
  readonly data: { type: string; resource_type?: string; id?: string; record?: Record<string, unknown> };
}

/** An EventSource client that records every message; `until` resolves with the first message that matches. */
const listen = (url: string) => {
  const received: Received[] = [];
  const waiters: { match: (r: Received) => boolean; resolve: (r: Received) => void }[] = [];
  const source = new EventSource(url);
  sources.push(source);
  source.onmessage = (message) => {
    const parsed = JSON.parse(message.data) as { event: string; data: Received['data'] };
    const r = { id: message.lastEventId, event: parsed.event, data: parsed.data };
    received.push(r);
    for (const w of waiters.filter((w) => w.match(r))) w.resolve(r);
  };
  const until = (match: (r: Received) => boolean, withinMs = 10_000): Promise<Received> => {
    const seen = received.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<Received>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`not received in ${withinMs} ms: ${JSON.stringify(received)}`)),
        withinMs,
      );
      waiters.push({ match, resolve: (r) => (clearTimeout(timer), resolve(r)) });
    });
  };
  return { source, received, until };
};

const about = (event: string, id: string) => (r: Received) => r.event === event && r.data.id === id;

beforeAll(async () => {
  const capacity = await call('PUT', '/admin/orchestration', e2e.admin, { instances: 5 });
  expect([capacity.status, capacity.json]).toEqual([200, expect.anything()]);
});

afterAll(async () => {
  for (const source of sources) source.close();
});

describe('GET /sse/targets', () => {
  it('reports a target enrolled, renamed and deleted over HTTP as created, updated and deleted, after a ping', async () => {
    // Prepare
    const client = listen(streamUrl('targets', `sse_token=${await sseToken()}`));
    await client.until((r) => r.event === 'ping');
    // Act
    const id = await enroll('sse-web-1');
    const created = await client.until(about('created', id));
    expect((await call('PUT', `/targets/${id}`, e2e.admin, { name: 'sse-web-1b' })).status).toBe(200);
    const updated = await client.until(about('updated', id));
    expect((await call('DELETE', `/targets/${id}`, e2e.admin)).status).toBe(204);
    const deleted = await client.until(about('deleted', id));
    client.source.close();
    // Assess
    expect(client.received[0]).toEqual({ id: '', event: 'ping', data: { type: 'ping' } });
    expect(client.received.every((r) => r.data.type === r.event)).toBe(true);
    expect(created.data).toEqual({
      type: 'created',
      resource_type: 'targets',
      id,
      record: expect.objectContaining({
        id,
        name: 'sse-web-1',
        hostname: 'sse-web-1',
        status: 'online',
        tenant_id: null,
      }),
    });
    expect(updated.data.record).toMatchObject({ id, name: 'sse-web-1b' });
    expect(deleted.data.record).toMatchObject({ id, name: 'sse-web-1b' });
    expect([created.id, updated.id, deleted.id].map(Number)).toEqual([1, 2, 3]);
  });

  it('frames every message as one data line of {event, data} with no event: field, the ping first (raw text)', async () => {
    // Prepare
    const controller = new AbortController();
    const response = await fetch(streamUrl('targets', `sse_token=${await sseToken()}&snapshot=true`), {
      signal: controller.signal,
    });
    await enroll('sse-raw-1');
    // Act: read until a created message has arrived
    let text = '';
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const until = Date.now() + 10_000;
    while (!text.includes('"created"') && Date.now() < until) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    controller.abort();
    // Assess
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect(text.startsWith('retry: ')).toBe(true);
    expect(text).not.toMatch(/^event:/m);
    const messages = text
      .split('\n\n')
      .filter((block) => block.includes('data:'))
      .map((block) => {
        const data = block.split('\n').filter((line) => line.startsWith('data:'));
        expect(data).toHaveLength(1);
        return JSON.parse(data[0]!.slice(6)) as { event: string; data: { type: string } };
      });
    expect(messages[0]).toEqual({ event: 'ping', data: { type: 'ping' } });
    expect(messages.length).toBeGreaterThan(1);
    expect(
      messages.every((m) => m.data.type === m.event && ['ping', 'created', 'updated', 'deleted'].includes(m.event)),
    ).toBe(true);
  });

  it('sends the current records as created first with snapshot=true', async () => {
    // Prepare
    const id = await enroll('sse-snapshot-1');
    // Act
    const client = listen(streamUrl('targets', `sse_token=${await sseToken()}&snapshot=true`));
    const created = await client.until(about('created', id));
    client.source.close();
    // Assess
    expect(client.received[0]!.event).toBe('ping');
    expect(client.received.slice(1).every((r) => r.event === 'created')).toBe(true);
    expect(created.data.record).toMatchObject({ id, name: 'sse-snapshot-1' });
  });

  it('shows a tenant-scoped user its tenant’s targets only, not a global one', async () => {
    // Prepare
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Acme', slug: 'acme' });
    expect(tenant.status).toBe(201);
    await createUser('acme-sse@example.com', 'acme-sse-password', ['user'], tenant.json.id);
    const acme = (await api.login({ email: 'acme-sse@example.com', password: 'acme-sse-password' })).token;
    const client = listen(streamUrl('targets', `sse_token=${await sseToken(acme)}`));
    const everything = listen(streamUrl('targets', `sse_token=${await sseToken()}`));
    await Promise.all([client.until((r) => r.event === 'ping'), everything.until((r) => r.event === 'ping')]);
    // Act: the global one first, so it would arrive first
    const global = await enroll('sse-global-1');
    const own = await enroll('sse-acme-1', tenant.json.id);
    await client.until(about('created', own));
    await everything.until(about('created', own));
    client.source.close();
    everything.source.close();
    // Assess
    expect(client.received.filter((r) => r.event !== 'ping').map((r) => r.data.id)).toEqual([own]);
    expect(everything.received.some(about('created', global))).toBe(true);
  });

  it('accepts only the sse_token: the Authorization header alone is 401, a used token is 401', async () => {
    // Act
    const viaHeader = await fetch(`${e2e.stack.baseUrl}/api/v1/sse/targets`, {
      headers: { authorization: `Bearer ${e2e.admin}` },
    });
    const none = await fetch(`${e2e.stack.baseUrl}/api/v1/sse/targets`);
    const token = await sseToken();
    const controller = new AbortController();
    const firstUse = await fetch(streamUrl('targets', `sse_token=${token}`), { signal: controller.signal });
    controller.abort();
    const secondUse = await fetch(streamUrl('targets', `sse_token=${token}`));
    // Assess
    expect([viaHeader.status, await errorCode(viaHeader)]).toEqual([401, 'INVALID_TOKEN']);
    expect(none.status).toBe(401);
    expect(firstUse.status).toBe(200);
    expect([secondUse.status, await errorCode(secondUse)]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('answers 404 NOT_FOUND for an unknown resource type without using up the token, and 403 without the type’s read permission', async () => {
    // Prepare
    const token = await sseToken();
    const key = await call('POST', '/auth/api-keys', e2e.admin, {
      name: 'deployments only',
      scopes: ['deployments:read'],
    });
    expect(key.status).toBe(201);
    // Act
    const unknown = await fetch(streamUrl('widgets', `sse_token=${token}`));
    const controller = new AbortController();
    const sameTokenAfter = await fetch(streamUrl('deployments', `sse_token=${token}`), { signal: controller.signal });
    controller.abort();
    const noPermission = await fetch(streamUrl('targets', `sse_token=${await sseToken(key.json.full_key)}`));
    const badSnapshot = await fetch(streamUrl('targets', `sse_token=${await sseToken()}&snapshot=yes`));
    // Assess
    expect([unknown.status, await errorCode(unknown)]).toEqual([404, 'NOT_FOUND']);
    expect(sameTokenAfter.status).toBe(200);
    expect([noPermission.status, await errorCode(noPermission)]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect(badSnapshot.status).toBe(400);
  });
});

describe('GET /sse/deployments', () => {
  it('reports a deployment created, then its cancellation as an update with state cancelled', async () => {
    // Prepare: stored directly, so the execution engine does not run it
    const client = listen(streamUrl('deployments', `sse_token=${await sseToken()}`));
    await client.until((r) => r.event === 'ping');
    const { deploymentsDeps } = await import('../../functions/shared/deployments-wiring.js');
    const deps = deploymentsDeps();
    const deployment = await newDeployment(deps, aDraft());
    expect(await deps.orchestration.start(deployment)).toEqual(expect.any(String));
    const created = await client.until(about('created', deployment.id));
    // Act
    const cancelled = await call('POST', `/deployments/${deployment.id}/cancel`, e2e.admin, { reason: 'not today' });
    const updated = await client.until(
      (r) => about('updated', deployment.id)(r) && r.data.record?.['state'] === 'cancelled',
    );
    client.source.close();
    // Assess
    expect(cancelled.status).toBe(200);
    expect(created.data).toMatchObject({
      type: 'created',
      resource_type: 'deployments',
      id: deployment.id,
      record: { id: deployment.id, state: 'running' },
    });
    expect(updated.data.record).toMatchObject({
      id: deployment.id,
      state: 'cancelled',
      completed_at: expect.any(String),
    });
  });
});
