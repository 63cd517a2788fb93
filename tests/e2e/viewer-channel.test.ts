// The viewer channel over the local stack, with a real `ws` client through the local front to serverless-offline's
// WebSocket API (the agents' socket; API Gateway in the cloud) and the real agents: the handshake takes only a fresh
// sse_token (socket_url from POST /auth/sse-token), a finished deployment's whole history arrives as `events` with
// ids 1..n and its end, last_event_id resumes with only the rest, refusals are `error` messages in the API's
// envelope and leave the connection open, at most 20 topics per connection, ping answers pong, and a logout or an
// API key revoke closes the connection with `closing` `revoked` within 5 s.
import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { newDeployment } from '../../domain/deployments/start.js';
import { aDraft } from '../fakes/deployments.js';
import { apiClient } from '../support/http.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';
import { createUser } from '../support/users.js';

// The sweep stays idle: the deployments stored directly for the topic limit are not the engine's to run.
const e2e = useStackWithAgents('viewers', { env: { SWEEP_INTERVAL_MS: '3600000' }, tableStreams: true });

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

type Message = { type?: string; ref?: string; [field: string]: unknown };

interface Viewer {
  readonly ws: WebSocket;
  readonly messages: Message[];
  send(message: unknown): void;
  next(predicate: (m: Message) => boolean, withinMs?: number): Promise<Message>;
  readonly closed: Promise<number>;
}

/** A fresh single-use token and the channel's URL, as the console gets them. */
const grant = async (token: string): Promise<{ url: string; sseToken: string }> => {
  const issued = await call('POST', '/auth/sse-token', token, {});
  expect(issued.status).toBe(200);
  expect(issued.json.socket_url).toEqual(expect.stringMatching(/^ws:\/\/.+\/api\/v1\/agent\/socket$/));
  return { url: issued.json.socket_url, sseToken: issued.json.sse_token };
};

/** The handshake's refusal status, or 101 when it was accepted. */
const handshake = (url: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', (error) => reject(error));
  });

const open = async (token: string): Promise<Viewer> => {
  const { url, sseToken } = await grant(token);
  const ws = new WebSocket(`${url}?sse_token=${encodeURIComponent(sseToken)}`);
  const messages: Message[] = [];
  const waiters: { predicate: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as Message;
    messages.push(message);
    for (const w of waiters.splice(0)) {
      if (w.predicate(message)) w.resolve(message);
      else waiters.push(w);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    messages,
    closed,
    send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: (predicate, withinMs = 10_000) =>
      new Promise((done, fail) => {
        const seen = messages.find(predicate);
        if (seen !== undefined) return done(seen);
        const timer = setTimeout(() => fail(new Error('no such message in time')), withinMs);
        waiters.push({
          predicate,
          resolve: (m) => {
            clearTimeout(timer);
            done(m);
          },
        });
      }),
  };
};

const eventIds = (messages: readonly Message[], deploymentId: string): number[] =>
  messages
    .filter((m) => m.type === 'events' && m['deployment_id'] === deploymentId)
    .flatMap((m) => (m['events'] as { id: number }[]).map((e) => e.id));

/** A deployment of `echo` lines on local-1, run by the real agent to success; its id. */
const finishedDeployment = async (): Promise<string> => {
  const action = await call('POST', '/actions', e2e.admin, {
    slug: `viewer-${Date.now()}`,
    name: 'Viewer lines',
    version: { version: '1.0.0', script: 'for i in 1 2 3 4 5; do echo "line $i"; done' },
  });
  expect(action.status).toBe(201);
  const created = await call('POST', '/deployments', e2e.admin, {
    action_id: action.json.id,
    target_tags: [{ key: 'role', value: 'web' }],
  });
  expect(created.status).toBe(201);
  const id = created.json.deployment_id as string;
  const until = Date.now() + 40_000;
  while ((await call('GET', `/deployments/${id}`, e2e.admin)).json.state !== 'success') {
    if (Date.now() > until) throw new Error('the deployment did not finish');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return id;
};

const password = 'viewer-password-1';
const signIn = async (email: string, roles: string[], tenantId: string | null = null): Promise<string> => {
  await createUser(email, password, roles, tenantId);
  return (await api.login({ email, password })).token;
};

describe('the viewer channel', () => {
  it('refuses a handshake without a token, with a used one, and answers socket_url with the token', async () => {
    // Arrange
    const { url, sseToken } = await grant(e2e.admin);
    const first = await handshake(`${url}?sse_token=${sseToken}`);
    // Act
    const none = await handshake(`${url}?sse_token=`);
    const used = await handshake(`${url}?sse_token=${sseToken}`);
    // Assess
    expect(first).toBe(101);
    expect(none).toBe(401);
    expect(used).toBe(401);
  });

  it('sends a finished deployment its whole history with ids 1..n and the end, and resumes after last_event_id', async () => {
    // Arrange
    const id = await finishedDeployment();
    const reply = await call('GET', `/deployments/${id}/logs/history?limit=100`, e2e.admin);
    expect([reply.status, Array.isArray(reply.json)]).toEqual([200, true]);
    const history = reply.json as unknown[];
    const viewer = await open(e2e.admin);
    // Act
    viewer.send({ action: 'subscribe', ref: 's1', topic: 'deployment', deployment_id: id });
    const subscribed = await viewer.next((m) => m.type === 'subscribed');
    await viewer.next(
      (m) =>
        m.type === 'events' &&
        (m['events'] as { event: string; data: { new_state?: string } }[]).some((e) => e.data.new_state === 'success'),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const all = eventIds(viewer.messages, id);
    const resumed = await open(e2e.admin);
    resumed.send({ action: 'subscribe', topic: 'deployment', deployment_id: id, last_event_id: all.length - 3 });
    await resumed.next((m) => m.type === 'subscribed');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // Assess
    expect(subscribed).toEqual({
      type: 'subscribed',
      ref: 's1',
      topic: { topic: 'deployment', deployment_id: id, last_event_id: 0 },
    });
    expect(all).toEqual(Array.from({ length: history.length }, (_, i) => i + 1));
    expect(all.length).toBeGreaterThan(5);
    const events = viewer.messages.flatMap((m) =>
      m.type === 'events'
        ? (m['events'] as { event: string; data: { type: string; log?: { message: string } } }[])
        : [],
    );
    expect(events.filter((e) => e.event === 'log').map((e) => e.data.log?.message)).toEqual(
      expect.arrayContaining(['line 1', 'line 5']),
    );
    expect(events.at(-1)).toMatchObject({
      event: 'state_change',
      data: { type: 'state_change', new_state: 'success' },
    });
    expect(eventIds(resumed.messages, id)).toEqual([all.length - 2, all.length - 1, all.length]);
    viewer.ws.close();
    resumed.ws.close();
  });

  it('answers refusals as error messages and stays open: another tenant, no permission, malformed, ping', async () => {
    // Arrange
    const id = await finishedDeployment();
    const tenant = (await call('POST', '/tenants', e2e.admin, { name: 'Viewers T', slug: `viewers-${Date.now()}` }))
      .json.id as string;
    const tenantUser = await open(await signIn('tina.viewer@example.com', ['user'], tenant));
    const blind = await open(await signIn('bo.viewer@example.com', []));
    // Act
    tenantUser.send({ action: 'subscribe', ref: 't1', topic: 'deployment', deployment_id: id });
    blind.send({ action: 'subscribe', ref: 'b1', topic: 'deployment', deployment_id: id });
    const notFound = await tenantUser.next((m) => m.type === 'error');
    const forbidden = await blind.next((m) => m.type === 'error');
    blind.send('not json');
    blind.send({ action: 'subscribe', ref: 'm1', topic: 'deployment' });
    blind.send({ action: 'dance', ref: 'm2' });
    const malformed = [
      await blind.next((m) => m.type === 'error' && m.ref === undefined && m !== forbidden),
      await blind.next((m) => m.type === 'error' && m.ref === 'm1'),
      await blind.next((m) => m.type === 'error' && m.ref === 'm2'),
    ];
    blind.send({ action: 'ping', ref: 'p1' });
    const pong = await blind.next((m) => m.type === 'pong');
    // Assess
    expect(notFound).toMatchObject({ ref: 't1', error: { code: 'NOT_FOUND', message: expect.any(String) } });
    expect(forbidden).toMatchObject({
      ref: 'b1',
      error: { code: 'INSUFFICIENT_PERMISSIONS', details: { required: 'deployments:read' } },
    });
    expect(malformed.map((m) => (m['error'] as { code: string }).code)).toEqual([
      'VALIDATION_ERROR',
      'VALIDATION_ERROR',
      'VALIDATION_ERROR',
    ]);
    expect(pong).toEqual({ type: 'pong', ref: 'p1' });
    expect(blind.ws.readyState).toBe(WebSocket.OPEN);
    expect(eventIds(tenantUser.messages, id)).toEqual([]);
    tenantUser.ws.close();
    blind.ws.close();
  });

  it("gives an admin's API key only its scopes: a key without deployments:read is refused both topics", async () => {
    // Arrange
    const id = await finishedDeployment();
    const created = await call('POST', '/auth/api-keys', e2e.admin, { name: 'viewer-key', scopes: ['targets:read'] });
    expect(created.status).toBe(201);
    const viewer = await open(created.json.full_key as string);
    // Act
    viewer.send({ action: 'subscribe', ref: 'k1', topic: 'deployment', deployment_id: id });
    const deployment = await viewer.next((m) => m.type === 'error' && m.ref === 'k1');
    viewer.send({ action: 'subscribe', ref: 'k2', topic: 'resources', resource_type: 'deployments' });
    const list = await viewer.next((m) => m.type === 'error' && m.ref === 'k2');
    // Assess
    for (const refusal of [deployment, list])
      expect(refusal).toMatchObject({
        error: { code: 'INSUFFICIENT_PERMISSIONS', details: { required: 'deployments:read' } },
      });
    expect(eventIds(viewer.messages, id)).toEqual([]);
    viewer.ws.close();
  });

  it('watches at most 20 topics per connection', async () => {
    // Arrange
    expect((await call('PUT', '/admin/orchestration', e2e.admin, { instances: 30 })).status).toBe(200);
    const { deploymentsDeps } = await import('../../functions/shared/deployments-wiring.js');
    const deps = deploymentsDeps();
    const ids: string[] = [];
    for (let i = 0; i < 21; i += 1) {
      const deployment = await newDeployment(deps, aDraft());
      expect(await deps.orchestration.start(deployment)).toEqual(expect.any(String));
      ids.push(deployment.id);
    }
    const viewer = await open(e2e.admin);
    // Act
    for (const [i, id] of ids.entries())
      viewer.send({ action: 'subscribe', ref: `r${i}`, topic: 'deployment', deployment_id: id });
    const answers = await Promise.all(
      ids.map((_, i) =>
        viewer.next((m) => m.ref === `r${i}` && (m.type === 'subscribed' || m.type === 'error'), 20_000),
      ),
    );
    // Assess
    expect(answers.filter((m) => m.type === 'subscribed')).toHaveLength(20);
    expect(answers.filter((m) => m.type === 'error').map((m) => m['error'])).toEqual([
      expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringContaining('20') }),
    ]);
    viewer.ws.close();
  });

  it('closes the connection with closing revoked within 5 s of a logout, and of an API key revoke', async () => {
    // Arrange
    const session = await signIn('lou.viewer@example.com', ['user']);
    const key = await call('POST', '/auth/api-keys', session, { name: 'viewer key', scopes: ['deployments:read'] });
    expect(key.status).toBe(201);
    const byKey = await open(key.json.full_key);
    const bySession = await open(session);
    // Act
    const revokedAt = Date.now();
    expect((await call('DELETE', `/auth/api-keys/${key.json.api_key.id}`, session)).status).toBe(200);
    const keyClosing = await byKey.next((m) => m.type === 'closing', 5_000);
    const keyClosed = await byKey.closed;
    const keyMs = Date.now() - revokedAt;
    const stillOpen = bySession.ws.readyState;
    const loggedOutAt = Date.now();
    expect((await call('POST', '/auth/logout', session, {})).status).toBe(200);
    const sessionClosing = await bySession.next((m) => m.type === 'closing', 5_000);
    await bySession.closed;
    const logoutMs = Date.now() - loggedOutAt;
    // Assess
    expect(keyClosing).toEqual({ type: 'closing', reason: 'revoked' });
    expect(sessionClosing).toEqual({ type: 'closing', reason: 'revoked' });
    expect(keyClosed).toBeGreaterThan(0);
    expect(stillOpen).toBe(WebSocket.OPEN);
    expect(keyMs).toBeLessThan(5_000);
    expect(logoutMs).toBeLessThan(5_000);
  });
});
