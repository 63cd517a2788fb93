// Pushed at the write, over the local stack with real `ws` clients and the real agents: a viewer subscribed to a
// running deployment receives its log lines live (the writer pushes each commit), in seq order once the client's
// rule is applied (drop seq <= last), ending with the terminal state_change, with no gap; 50 viewers of one
// deployment all receive every line; a viewer of the deployments list sees a new deployment `created` and its state
// changes `updated` (DynamoDB Local's stream read by the local stack); another tenant's viewer sees none of it.
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/http.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';
import { createUser } from '../support/users.js';

// 50 viewers of one user at once: the per-user limit of open streams raised for this file.
const e2e = useStackWithAgents('viewer-push', { env: { STREAMS_PER_USER: '60' }, tableStreams: true });

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

type Message = { type?: string; [field: string]: unknown };
type Event = { id: number; event: string; data: Record<string, unknown> };

interface Viewer {
  readonly ws: WebSocket;
  readonly messages: Message[];
  send(message: unknown): void;
  next(predicate: (m: Message) => boolean, withinMs?: number): Promise<Message>;
}

const viewers: Viewer[] = [];
afterAll(() => {
  for (const viewer of viewers) viewer.ws.close();
});

const open = async (token: string): Promise<Viewer> => {
  const issued = await call('POST', '/auth/sse-token', token, {});
  expect(issued.status).toBe(200);
  const ws = new WebSocket(`${issued.json.socket_url}?sse_token=${encodeURIComponent(issued.json.sse_token)}`);
  const messages: Message[] = [];
  const waiters: { predicate: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
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
  const viewer: Viewer = {
    ws,
    messages,
    send: (message) => ws.send(JSON.stringify(message)),
    next: (predicate, withinMs = 30_000) =>
      new Promise((done, fail) => {
        const seen = messages.find(predicate);
        if (seen !== undefined) return done(seen);
        const timer = setTimeout(
          () => fail(new Error(`no such message in time: ${JSON.stringify(messages)}`)),
          withinMs,
        );
        waiters.push({
          predicate,
          resolve: (m) => {
            clearTimeout(timer);
            done(m);
          },
        });
      }),
  };
  viewers.push(viewer);
  return viewer;
};

/** The events of a deployment a viewer applied, by the client's rule: in arrival order, each seq once (seq <= last dropped). */
const applied = (viewer: Viewer, deploymentId: string): Event[] => {
  const events = viewer.messages
    .filter((m) => m.type === 'events' && m['deployment_id'] === deploymentId)
    .flatMap((m) => m['events'] as Event[])
    .sort((a, b) => a.id - b.id);
  const seen = new Set<number>();
  return events.filter((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)));
};

const isEnd = (deploymentId: string) => (m: Message) =>
  m.type === 'events' &&
  m['deployment_id'] === deploymentId &&
  (m['events'] as Event[]).some(
    (e) => e.event === 'state_change' && ['success', 'failed'].includes(String(e.data['new_state'])),
  );

/** An action printing `lines` lines, 50 ms apart (so they arrive in several output posts), on local-1. */
const startDeployment = async (lines: number): Promise<string> => {
  const action = await call('POST', '/actions', e2e.admin, {
    slug: `push-${Date.now()}`,
    name: 'Pushed lines',
    version: {
      version: '1.0.0',
      script: `for i in $(seq 1 ${lines}); do echo "pushed line $i"; sleep 0.05; done`,
    },
  });
  expect(action.status).toBe(201);
  const created = await call('POST', '/deployments', e2e.admin, {
    action_id: action.json.id,
    target_tags: [{ key: 'role', value: 'web' }],
  });
  expect(created.status).toBe(201);
  return created.json.deployment_id as string;
};

describe('deployment events pushed at the write', () => {
  it('reaches a subscribed viewer live, in seq order, up to the terminal state_change, with no gap', async () => {
    // Prepare
    const viewer = await open(e2e.admin);
    // Act
    const id = await startDeployment(40);
    viewer.send({ action: 'subscribe', topic: 'deployment', deployment_id: id, last_event_id: 0 });
    await viewer.next((m) => m.type === 'subscribed');
    await viewer.next(isEnd(id), 60_000);
    // Assess
    const events = applied(viewer, id);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1)); // 1..n: no gap, no duplicate
    expect(events.at(-1)).toMatchObject({ event: 'state_change', data: { new_state: 'success' } });
    const lines = events.filter((e) => e.event === 'log').map((e) => (e.data['log'] as { message: string }).message);
    expect(lines).toEqual(Array.from({ length: 40 }, (_, i) => `pushed line ${i + 1}`));
    // Live: the events came in many messages (commits), not in one catch-up at the end.
    expect(viewer.messages.filter((m) => m.type === 'events').length).toBeGreaterThan(3);
    const history = await call('GET', `/deployments/${id}/logs/history?limit=100`, e2e.admin);
    expect(events).toHaveLength(history.json.length);
  });

  it('reaches all of 50 viewers of one deployment, every line', async () => {
    // Prepare
    // Opened five at a time: the local front sheds a burst of 50 token requests with 503 (its admission limit).
    const fifty: Viewer[] = [];
    while (fifty.length < 50) fifty.push(...(await Promise.all(Array.from({ length: 5 }, () => open(e2e.admin)))));
    const id = await startDeployment(20);
    // Act
    for (const viewer of fifty)
      viewer.send({ action: 'subscribe', topic: 'deployment', deployment_id: id, last_event_id: 0 });
    await Promise.all(fifty.map((viewer) => viewer.next(isEnd(id), 90_000)));
    // Assess
    const expected = applied(fifty[0]!, id).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(20);
    for (const viewer of fifty) expect(applied(viewer, id).map((e) => e.id)).toEqual(expected);
    for (const viewer of fifty) viewer.ws.close();
  });
});

describe('resource lists pushed from the table stream', () => {
  it("shows a new deployment created and its state changes updated, and nothing to another tenant's viewer", async () => {
    // Prepare
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Push T', slug: `push-${Date.now()}` });
    expect(tenant.status).toBe(201);
    await createUser('other.push@example.com', 'push-password-1', ['user'], tenant.json.id);
    const other = await open((await api.login({ email: 'other.push@example.com', password: 'push-password-1' })).token);
    const admin = await open(e2e.admin);
    admin.send({ action: 'subscribe', topic: 'resources', resource_type: 'deployments' });
    other.send({ action: 'subscribe', topic: 'resources', resource_type: 'deployments' });
    await admin.next((m) => m.type === 'subscribed');
    await other.next((m) => m.type === 'subscribed');
    // Act
    const id = await startDeployment(3);
    const about = (event: string, state?: string) => (m: Message) =>
      m.type === 'changes' &&
      (m['changes'] as { event: string; data: { id: string; record: { state: string } } }[]).some(
        (c) => c.event === event && c.data.id === id && (state === undefined || c.data.record.state === state),
      );
    const created = await admin.next(about('created'), 20_000);
    await admin.next(about('updated', 'success'), 40_000);
    // Assess
    expect(created).toMatchObject({ type: 'changes', resource_type: 'deployments' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(other.messages.filter((m) => m.type === 'changes')).toEqual([]);
  }, 90_000);
});
