// The agents' WebSocket, server side, spoken by hand over a real socket through the local front to
// serverless-offline's WebSocket API (as API Gateway in the cloud): the handshake takes only a valid agent token,
// a queued command or cancel notice is pushed as a wake-up at once and stays in the inbox until claimed, heartbeats
// ride the socket, a second connection replaces the first, a deleted target's socket is told and closed, and a
// closed one is cleared from the target. The real agent over the socket: tests/e2e/agent-channel.test.ts.
import { describe, expect, it } from 'vitest';
import { enqueueCommand } from '../../domain/targets/commands.js';
import { apiClient } from '../support/http.js';
import { useStack } from '../support/stack-fixture.js';

const e2e = useStack('socket');

const api = apiClient(() => e2e.stack.baseUrl);
const call = (method: string, path: string, token?: string, body?: unknown) =>
  api.call(method, `/api/v1${path}`, { ...(token === undefined ? {} : { token }), body });
const wiring = async () => (await import('../../functions/shared/targets-wiring.js')).targetsDeps();

/** A WebSocket with its received messages, and promises for the next one and for its close. */
interface Socket {
  readonly ws: WebSocket;
  readonly messages: unknown[];
  next(predicate?: (m: { type?: string }) => boolean, withinMs?: number): Promise<{ type?: string }>;
  readonly closed: Promise<number>;
}

const open = (url: string, token: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } } as unknown as string[]);
    const messages: unknown[] = [];
    const waiters: { predicate: (m: { type?: string }) => boolean; resolve: (m: { type?: string }) => void }[] = [];
    const closed = new Promise<number>((done) => ws.addEventListener('close', (e) => done(e.code)));
    ws.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { type?: string };
      messages.push(message);
      for (const w of waiters.splice(0)) {
        if (w.predicate(message)) w.resolve(message);
        else waiters.push(w);
      }
    });
    ws.addEventListener('open', () =>
      resolve({
        ws,
        messages,
        closed,
        next: (predicate = () => true, withinMs = 5_000) =>
          new Promise((done, fail) => {
            const seen = (messages as { type?: string }[]).find(predicate);
            if (seen !== undefined) return done(seen);
            const timer = setTimeout(() => fail(new Error('no such message within the time')), withinMs);
            waiters.push({
              predicate,
              resolve: (m) => {
                clearTimeout(timer);
                done(m);
              },
            });
          }),
      }),
    );
    ws.addEventListener('error', () => reject(new Error('the WebSocket could not be opened')));
  });

const enroll = async (name: string) => {
  const token = (await call('POST', '/targets/enrollment-tokens', e2e.admin, { expires_in_hours: 1 })).json.token;
  const registered = await call('POST', '/agent/register', undefined, {
    enrollment_token: token,
    name,
    hostname: `${name}.example`,
    os: 'linux',
    arch: 'x64',
    agent_version: '1.0.0',
    tags: [],
  });
  expect(registered.status).toBe(201);
  return { targetId: registered.json.target_id as string, token: registered.json.agent_token as string };
};

const queueFor = async (targetId: string) =>
  enqueueCommand(await wiring(), {
    targetId,
    deploymentId: 'deployment-socket',
    stepId: `step-${Math.random().toString(36).slice(2, 8)}`,
    attempt: 1,
    action: { id: 'action-1', slug: 'hello', version: '1.0.0' },
    script: 'echo hi',
    interpreter: 'sh',
    variables: {},
    secretVariables: [],
    timeoutSeconds: 30,
  });

const until = async <T>(what: () => Promise<T | undefined>, withinMs = 10_000): Promise<T> => {
  const end = Date.now() + withinMs;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('not within the time');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('GET /api/v1/agent/channel', () => {
  it('tells an agent where its socket is and how often to speak, and refuses user credentials', async () => {
    // Arrange
    const agent = await enroll('channel-1');
    // Act
    const channel = await call('GET', '/agent/channel', agent.token);
    const asUser = await call('GET', '/agent/channel', e2e.admin);
    // Assess
    expect(channel.status).toBe(200);
    expect(channel.json).toEqual({
      socket_url: `ws://localhost:${e2e.stack.port}/api/v1/agent/socket`,
      heartbeat_seconds: 25,
      idle_ping_seconds: 25,
      poll_wait_seconds: 20,
      output_in_completion: true,
      release: {
        version: e2e.stack.programs.agent?.version,
        sha256: e2e.stack.programs.agent?.sha256,
        size: e2e.stack.programs.agent?.size,
        url: e2e.stack.programs.agent?.path,
      },
      accepted: '>=1.0.0 <2.0.0',
    });
    expect(asUser.status).toBe(401);
  });
});

describe('the agent WebSocket', () => {
  it('refuses the handshake without a valid agent token, and to a user token', async () => {
    // Arrange
    const url = (await call('GET', '/agent/channel', (await enroll('refused-1')).token)).json.socket_url as string;
    // Act / Assess
    await expect(open(url, 'dpa_not-a-real-token')).rejects.toThrow(/could not be opened/);
    await expect(open(url, e2e.admin)).rejects.toThrow(/could not be opened/);
    await expect(open(url.replace('/socket', '/other'), 'dpa_x')).rejects.toThrow(/could not be opened/);
  });

  it('pushes a wake-up the moment a command is queued; the command waits in the inbox until claimed', async () => {
    // Arrange
    const agent = await enroll('push-1');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const socket = await open(url, agent.token);
    const target = await call('GET', `/targets/${agent.targetId}`, e2e.admin);
    expect(target.json.status).toBe('online');
    // Act
    const queuedAt = Date.now();
    const command = await queueFor(agent.targetId);
    await socket.next((m) => m.type === 'wake');
    const pushedMs = Date.now() - queuedAt;
    const claimed = await call('GET', '/agent/commands?wait=0&max=4', agent.token);
    // Assess
    expect(pushedMs).toBeLessThan(3_000);
    expect(claimed.json.commands.map((c: { id: string }) => c.id)).toEqual([command.id]);
    socket.ws.close(1000);
    await socket.closed;
  });

  it('takes heartbeats over the socket, and answers a malformed message with an error message', async () => {
    // Arrange
    const agent = await enroll('heartbeat-1');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const socket = await open(url, agent.token);
    const before = (await call('GET', `/targets/${agent.targetId}`, e2e.admin)).json.last_heartbeat_at as string;
    await new Promise((r) => setTimeout(r, 20));
    // Act
    socket.ws.send(JSON.stringify({ action: 'heartbeat', running_command_ids: [] }));
    const after = await until(async () => {
      const seen = (await call('GET', `/targets/${agent.targetId}`, e2e.admin)).json.last_heartbeat_at as string;
      return seen > before ? seen : undefined;
    });
    socket.ws.send('not json');
    const notJson = await socket.next((m) => m.type === 'error');
    socket.ws.send(JSON.stringify({ action: 'run', script: 'rm -rf /' }));
    const unknown = await socket.next((m) => m.type === 'error' && socket.messages.length >= 2);
    // a frame naming its own target (one conditional write) is taken too
    socket.ws.send(JSON.stringify({ action: 'heartbeat', running_command_ids: [], target_id: agent.targetId }));
    const named = await until(async () => {
      const seen = (await call('GET', `/targets/${agent.targetId}`, e2e.admin)).json.last_heartbeat_at as string;
      return seen > after ? seen : undefined;
    });
    // Assess
    expect(after > before).toBe(true);
    expect(named > after).toBe(true);
    expect(notJson).toMatchObject({ type: 'error', error: { code: 'INVALID_BODY' } });
    expect(unknown).toMatchObject({ type: 'error', error: { code: 'VALIDATION_ERROR' } });
    socket.ws.close(1000);
  });

  it('a heartbeat naming another target changes nothing: refused, and the socket closed', async () => {
    // Arrange: two agents, one socket
    const agent = await enroll('heartbeat-2');
    const victim = await enroll('heartbeat-3');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const socket = await open(url, agent.token);
    const before = (await call('GET', `/targets/${victim.targetId}`, e2e.admin)).json.last_heartbeat_at as string;
    // Act
    socket.ws.send(JSON.stringify({ action: 'heartbeat', running_command_ids: [], target_id: victim.targetId }));
    const refused = await socket.next((m) => m.type === 'error');
    await socket.closed;
    // Assess
    expect(refused).toMatchObject({ type: 'error', error: { code: 'INVALID_TOKEN' } });
    expect((await call('GET', `/targets/${victim.targetId}`, e2e.admin)).json.last_heartbeat_at).toBe(before);
  });

  it('a second connection for the same target replaces the first: the first is told and closed', async () => {
    // Arrange
    const agent = await enroll('replace-1');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const first = await open(url, agent.token);
    // Act
    const second = await open(url, agent.token);
    const replaced = await first.next((m) => m.type === 'replaced');
    await first.closed;
    await queueFor(agent.targetId);
    // Assess
    expect(replaced).toEqual({ type: 'replaced' });
    expect(await second.next((m) => m.type === 'wake')).toEqual({ type: 'wake' });
    expect(first.messages.filter((m) => (m as { type: string }).type === 'wake')).toEqual([]);
    second.ws.close(1000);
  });

  it('a deleted target’s socket is told it was revoked and closed; its token opens no new one', async () => {
    // Arrange
    const agent = await enroll('revoke-1');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const socket = await open(url, agent.token);
    // Act
    expect((await call('DELETE', `/targets/${agent.targetId}`, e2e.admin)).status).toBe(204);
    // Assess
    expect(await socket.next((m) => m.type === 'revoked')).toEqual({ type: 'revoked' });
    await socket.closed;
    await expect(open(url, agent.token)).rejects.toThrow(/could not be opened/);
  });

  it('a closed socket is cleared from its target, and a queued command then waits for a drain', async () => {
    // Arrange
    const agent = await enroll('closed-1');
    const url = (await call('GET', '/agent/channel', agent.token)).json.socket_url as string;
    const socket = await open(url, agent.token);
    // Act
    socket.ws.close(1000);
    await socket.closed;
    const stored = await until(async () => {
      const target = await (await wiring()).targets.get(agent.targetId);
      return typeof target?.connectionId === 'string' ? undefined : target;
    });
    const command = await queueFor(agent.targetId);
    const again = await open(url, agent.token);
    const drained = await call('GET', '/agent/commands?wait=0&max=4', agent.token);
    // Assess
    expect(stored.disconnectedAt).toEqual(expect.any(String));
    expect(drained.json.commands.map((c: { id: string }) => c.id)).toEqual([command.id]);
    again.ws.close(1000);
  });
});
