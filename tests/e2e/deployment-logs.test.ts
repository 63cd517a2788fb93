// The deployment log stream and history over the local stack: a real deployment (created over HTTP, on the local
// agents), its events appended through the store as the execution engine appends them, read with an EventSource
// client and as raw frames; resume with Last-Event-ID; the single-use sse_token; history paging; and a cancel over
// HTTP ending the stream with its state_change.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeploymentEvent } from '../../domain/deployments/events.js';
import { newDeployment } from '../../domain/deployments/start.js';
import { startLocalAgents, type LocalAgent } from '../../local/agents.js';
import { aDraft } from '../fakes/deployments.js';
import { apiClient } from '../support/http.js';
import { createUser } from '../support/users.js';
import { useStack } from '../support/stack-fixture.js';

// Deployments here are stored without waking the engine; the sweep would give them a check chain after a minute
// (rightly: nothing else would) and the engine's events would mix with the ones a test appends. It stays idle.
// Deployments here stay running (a long sleep) while the test appends their events: room for all of them.
const e2e = useStack('logs', { env: { SWEEP_INTERVAL_MS: '3600000' } });
let dir: string;
let agents: readonly LocalAgent[] = [];

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });

const store = async () => (await import('../../functions/shared/stream-wiring.js')).deploymentEvents();
const append = async (deploymentId: string, events: readonly DeploymentEvent[]) =>
  (await store()).append(
    deploymentId,
    events.map((event) => ({ at: new Date().toISOString(), event })),
  );

const log = (message: string, stream: 'stdout' | 'stderr' = 'stdout'): DeploymentEvent => ({
  type: 'log',
  log: {
    timestamp: new Date().toISOString(),
    level: stream === 'stderr' ? 'error' : 'info',
    step_id: null,
    target_id: null,
    target_name: 'local-1',
    message,
    metadata: { stream },
  },
});
const ended = (deploymentId: string): DeploymentEvent => ({
  type: 'state_change',
  deployment_id: deploymentId,
  old_state: 'running',
  new_state: 'success',
  message: 'Deployment succeeded.',
});

/**
 * A running deployment stored directly, without waking the execution engine: its events are only the ones a test
 * appends (the engine's own events are covered by tests/e2e/execution.test.ts).
 */
const deploy = async (): Promise<string> => {
  const { deploymentsDeps } = await import('../../functions/shared/deployments-wiring.js');
  const deps = deploymentsDeps();
  const deployment = await newDeployment(deps, aDraft());
  expect(await deps.orchestration.start(deployment)).toEqual(expect.any(String));
  return deployment.id;
};

const sseToken = async (token = e2e.admin): Promise<string> => {
  const issued = await call('POST', '/auth/sse-token', token, {});
  expect(issued.status).toBe(200);
  return issued.json.sse_token;
};

const errorCode = async (response: Response): Promise<string> =>
  ((await response.json()) as { error: { code: string } }).error.code;

const logsUrl = (deploymentId: string, query: string) =>
  `${e2e.stack.baseUrl}/api/v1/deployments/${deploymentId}/logs?${query}`;

/** Reads a stream to its end (the server closes it); fails the test if that takes longer than `withinMs`. */
const readToEnd = async (url: string, headers: Record<string, string> = {}, withinMs = 10_000) => {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(withinMs) });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
};

interface Received {
  readonly id: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** An EventSource client that records every message; `until` resolves once a message matches. */
const listen = (url: string) => {
  const received: Received[] = [];
  const waiters: { match: (r: Received) => boolean; resolve: () => void }[] = [];
  let errored = false;
  const source = new EventSource(url);
  source.onmessage = (message) => {
    const parsed = JSON.parse(message.data) as { event: string; data: Record<string, unknown> };
    const r = { id: message.lastEventId, event: parsed.event, data: parsed.data };
    received.push(r);
    for (const w of waiters.filter((w) => w.match(r))) w.resolve();
  };
  source.onerror = () => {
    errored = true;
  };
  const until = (match: (r: Received) => boolean, withinMs = 10_000) =>
    received.some(match)
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`not received in ${withinMs} ms: ${JSON.stringify(received)}`)),
            withinMs,
          );
          waiters.push({ match, resolve: () => (clearTimeout(timer), resolve()) });
        });
  return { source, received, until, errored: () => errored };
};

/** Checks the spec's framing of raw SSE text: no `event:` field, one `data:` line per message, `id:` on events. */
const framesOf = (text: string) =>
  text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      expect(lines.filter((l) => l.startsWith('event:'))).toEqual([]);
      const data = lines.filter((l) => l.startsWith('data:'));
      const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
      if (data.length === 0) return { id, message: undefined };
      expect(data).toHaveLength(1);
      const message = JSON.parse(data[0]!.slice(6)) as { event: string; data: { type: string } };
      expect(message.data.type).toBe(message.event);
      return { id, message };
    })
    .filter((f) => f.message !== undefined);

beforeAll(async () => {
  expect((await call('PUT', '/admin/orchestration', e2e.admin, { instances: 50 })).status).toBe(200);
  dir = await mkdtemp(join(tmpdir(), 'deployer-logs-'));
  agents = await startLocalAgents(e2e.stack, dir, () => undefined);
});

afterAll(async () => {
  const running = await call('GET', '/deployments?status=running&limit=100', e2e.admin).catch(() => undefined);
  for (const d of running?.json?.data ?? [])
    await call('POST', `/deployments/${d.id}/cancel`, e2e.admin, { reason: 'test cleanup' });
  await Promise.all(agents.map((a) => a.stop({ graceSeconds: 1 })));
  await rm(dir, { recursive: true, force: true });
});

describe('GET /deployments/{id}/logs', () => {
  let finished: string;

  it('streams ping first, then every event in order with its seq as id, and closes after the terminal state_change', async () => {
    // Prepare: two events stored before the client connects, the rest while it listens
    const id = await deploy();
    finished = id;
    await append(id, [log('fetching'), log('warning: slow mirror', 'stderr')]);
    const client = listen(logsUrl(id, `sse_token=${await sseToken()}`));
    await client.until((r) => r.id === '2');
    // Act
    await append(id, [
      { type: 'progress', deployment_id: id, progress: 0.5, completed_steps: 0, total_steps: 1, message: 'halfway' },
      { type: 'step_update', step_id: 's1', state: 'completed', exit_code: 0, error_message: null, output: 'done' },
    ]);
    await append(id, [ended(id), log('after the end')]);
    await client.until((r) => r.event === 'state_change');
    // The server closed the stream: the client's reconnect (with the used token) is refused.
    await expect.poll(() => client.errored(), { timeout: 5_000 }).toBe(true);
    client.source.close();
    // Assess
    expect(client.received[0]).toEqual({ id: '', event: 'ping', data: { type: 'ping' } });
    expect(client.received.slice(1).map((r) => [r.id, r.event])).toEqual([
      ['1', 'log'],
      ['2', 'log'],
      ['3', 'progress'],
      ['4', 'step_update'],
      ['5', 'state_change'],
    ]);
    expect(client.received.slice(1).every((r) => r.data['type'] === r.event)).toBe(true);
    expect(client.received[1]!.data).toMatchObject({
      log: { message: 'fetching', target_name: 'local-1', level: 'info' },
    });
    expect(client.received[5]!.data).toEqual({
      type: 'state_change',
      deployment_id: id,
      old_state: 'running',
      new_state: 'success',
      message: 'Deployment succeeded.',
    });
  });

  it('gives a client arriving after the end the history and the final state_change, then closes (raw frames)', async () => {
    // Act
    const reply = await readToEnd(logsUrl(finished, `sse_token=${await sseToken()}`));
    // Assess
    expect([reply.status, reply.contentType]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect(reply.text.startsWith('retry: ')).toBe(true);
    expect(reply.text).not.toMatch(/^event:/m);
    const frames = framesOf(reply.text);
    expect(frames.map((f) => [f.id ?? null, f.message!.event])).toEqual([
      [null, 'ping'],
      ['1', 'log'],
      ['2', 'log'],
      ['3', 'progress'],
      ['4', 'step_update'],
      ['5', 'state_change'],
    ]);
  });

  it('resumes after Last-Event-ID (header or query) without loss or duplicates', async () => {
    // Prepare
    const id = await deploy();
    await append(
      id,
      ['a', 'b', 'c'].map((m) => log(m)),
    );
    const first = listen(logsUrl(id, `sse_token=${await sseToken()}`));
    await first.until((r) => r.id === '3');
    first.source.close();
    await append(
      id,
      ['d', 'e'].map((m) => log(m)),
    );
    // Act: a new token and the last id seen (?last_event_id=; the Last-Event-ID header below)
    const second = listen(logsUrl(id, `sse_token=${await sseToken()}&last_event_id=3`));
    await second.until((r) => r.id === '5');
    await append(id, [log('f'), ended(id)]);
    await second.until((r) => r.event === 'state_change');
    second.source.close();
    const byHeader = await readToEnd(logsUrl(id, `sse_token=${await sseToken()}`), { 'last-event-id': '4' });
    // Assess
    const ids = [...first.received, ...second.received].filter((r) => r.event !== 'ping').map((r) => Number(r.id));
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const messagesSeen = [...first.received, ...second.received]
      .filter((r) => r.event === 'log')
      .map((r) => (r.data['log'] as { message: string }).message);
    expect(messagesSeen).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(framesOf(byHeader.text).map((f) => f.id ?? 'ping')).toEqual(['ping', '5', '6', '7']);
  });

  it('ends the stream of a cancelled deployment with its state_change to cancelled', async () => {
    // Prepare
    const id = await deploy();
    const client = listen(logsUrl(id, `sse_token=${await sseToken()}`));
    await client.until((r) => r.event === 'ping');
    // Act
    const cancelled = await call('POST', `/deployments/${id}/cancel`, e2e.admin, { reason: 'wrong version' });
    await client.until((r) => r.event === 'state_change');
    client.source.close();
    // Assess
    expect(cancelled.status).toBe(200);
    const change = client.received.find((r) => r.event === 'state_change')!;
    expect(change.data).toMatchObject({
      deployment_id: id,
      old_state: 'running',
      new_state: 'cancelled',
      message: expect.stringContaining('wrong version'),
    });
    const history = await call('GET', `/deployments/${id}/logs/history`, e2e.admin);
    expect(history.json.at(-1)).toMatchObject({
      event_type: 'state_change',
      level: 'warn',
      metadata: { new_state: 'cancelled' },
    });
  });

  it('accepts only a valid single-use sse_token: the Authorization header, a used token and a missing one are 401', async () => {
    const id = await deploy();
    const token = await sseToken();
    const viaHeader = await fetch(`${e2e.stack.baseUrl}/api/v1/deployments/${id}/logs`, {
      headers: { authorization: `Bearer ${e2e.admin}` },
    });
    expect([viaHeader.status, await errorCode(viaHeader)]).toEqual([401, 'INVALID_TOKEN']);
    const controller = new AbortController();
    const firstUse = await fetch(logsUrl(id, `sse_token=${token}`), { signal: controller.signal });
    expect(firstUse.status).toBe(200);
    controller.abort();
    const secondUse = await fetch(logsUrl(id, `sse_token=${token}`));
    expect([secondUse.status, await errorCode(secondUse)]).toEqual([401, 'INVALID_TOKEN']);
    const none = await fetch(`${e2e.stack.baseUrl}/api/v1/deployments/${id}/logs`);
    expect(none.status).toBe(401);
    const badResume = await fetch(logsUrl(id, `sse_token=${await sseToken()}&last_event_id=x`));
    expect(badResume.status).toBe(400);
  });

  it('answers 404 for a missing deployment or another tenant’s, and 403 without deployments:read', async () => {
    // Prepare
    const id = await deploy();
    const tenant = await call('POST', '/tenants', e2e.admin, { name: 'Acme', slug: 'acme' });
    expect(tenant.status).toBe(201);
    await createUser('acme-viewer@example.com', 'acme-viewer-password', ['user'], tenant.json.id);
    const acme = (await api.login({ email: 'acme-viewer@example.com', password: 'acme-viewer-password' })).token;
    const key = await call('POST', '/auth/api-keys', e2e.admin, { name: 'targets only', scopes: ['targets:read'] });
    expect(key.status).toBe(201);
    // Act
    const otherTenant = await fetch(logsUrl(id, `sse_token=${await sseToken(acme)}`));
    const missing = await fetch(logsUrl('00000000-0000-4000-8000-000000000000', `sse_token=${await sseToken()}`));
    const noPermission = await fetch(logsUrl(id, `sse_token=${await sseToken(key.json.full_key)}`));
    // Assess
    expect([otherTenant.status, await errorCode(otherTenant)]).toEqual([404, 'NOT_FOUND']);
    expect([missing.status, await errorCode(missing)]).toEqual([404, 'NOT_FOUND']);
    expect([noPermission.status, await errorCode(noPermission)]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect((await call('GET', `/deployments/${id}/logs/history`, acme)).status).toBe(404);
  });
});

describe('GET /deployments/{id}/logs/history', () => {
  it('answers a bare array, oldest first, paged by offset and limit, with +00:00 timestamps', async () => {
    // Prepare
    const id = await deploy();
    await append(
      id,
      Array.from({ length: 12 }, (_, i) => log(`line ${i + 1}`, i % 2 === 0 ? 'stdout' : 'stderr')),
    );
    await append(id, [ended(id)]);
    // Act
    const all = await call('GET', `/deployments/${id}/logs/history`, e2e.admin);
    const page = await call('GET', `/deployments/${id}/logs/history?offset=2&limit=3`, e2e.admin);
    const past = await call('GET', `/deployments/${id}/logs/history?offset=50`, e2e.admin);
    const tooMany = await call('GET', `/deployments/${id}/logs/history?limit=101`, e2e.admin);
    // Assess
    expect(all.status).toBe(200);
    expect(Array.isArray(all.json)).toBe(true);
    expect(all.json.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(all.json[0]).toEqual({
      id: `${id}:1`,
      seq: 1,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/),
      level: 'info',
      event_type: 'log',
      step_id: null,
      target_id: null,
      target_name: 'local-1',
      message: 'line 1',
      stdout: 'line 1',
      stderr: null,
      metadata: { stream: 'stdout' },
      analysis: null,
    });
    expect(all.json[1]).toMatchObject({ level: 'error', stdout: null, stderr: 'line 2' });
    expect(all.json.every((e: { timestamp: string }) => e.timestamp.endsWith('+00:00'))).toBe(true);
    expect(all.json.at(-1)).toMatchObject({
      event_type: 'state_change',
      message: 'Deployment succeeded.',
      metadata: { new_state: 'success' },
    });
    expect(page.json.map((e: { message: string }) => e.message)).toEqual(['line 3', 'line 4', 'line 5']);
    expect([past.status, past.json]).toEqual([200, []]);
    expect([tooMany.status, tooMany.json.error.details.fields[0].field]).toEqual([400, 'limit']);
    expect(
      (await call('GET', '/deployments/00000000-0000-4000-8000-000000000000/logs/history', e2e.admin)).status,
    ).toBe(404);
  });
});
