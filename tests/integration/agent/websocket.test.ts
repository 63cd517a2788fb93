// The agent's push channel over a real WebSocket against the fake server: connect and drain, pushed wakes, drops
// and reconnects, the fallback to long polling, a replacing connection, a revoked target, the heartbeat cadences,
// and stopping. Intervals are shortened through AgentOptions and the channel's answer.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket as WsClient } from 'ws';
import type { AgentCommand } from '../../../protocol/messages.js';
import { startFakeAgentServer, type FakeAgentServer } from '../../support/fake-agent-server.js';
import { removeDir, startTestAgent, tempDir, until, type TestAgent } from './helpers.js';

let server: FakeAgentServer;
let dir: string;
let running: TestAgent | undefined;

beforeEach(async () => {
  server = await startFakeAgentServer();
  dir = await tempDir('agent-websocket-');
});
afterEach(async () => {
  await running?.agent.stop({ graceSeconds: 0 });
  running = undefined;
  await server.close();
  await removeDir(dir);
});

const start = async (options: Partial<Parameters<typeof startTestAgent>[0]> = {}) => {
  running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state'), ...options });
  return running;
};

const targetId = () => server.backend.target.id;
const enqueue = (overrides: Partial<AgentCommand> = {}) => server.backend.enqueue(targetId(), overrides);
const completed = async (id: string, timeoutMs = 15_000) => {
  await until(`${id} to complete`, () => server.backend.command(id).completion !== undefined, timeoutMs);
  return server.backend.command(id);
};
const connectedLines = (lines: string[]) => lines.filter((l) => l.includes('connected over WebSocket ws://'));
const connected = (lines: string[], count = 1) =>
  until(
    `${count} WebSocket connection(s)`,
    () => connectedLines(lines).length >= count && server.backend.connected(targetId()),
  );
const longPolls = () => server.backend.polls.filter((p) => p.wait > 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the WebSocket channel', () => {
  it('connects, drains its inbox on open, and does not long-poll', async () => {
    // Prepare: a command queued while the agent was not running
    const first = await start();
    await connected(first.lines);
    await first.agent.stop();
    expect(server.backend.goodbyes.map((g) => g.targetId)).toEqual([targetId()]); // a clean stop says goodbye
    const command = enqueue({ script: 'echo queued while away' });
    // Act
    const { lines } = await start({ enrollToken: undefined });
    const state = await completed(command.id);
    // Assess
    expect(server.backend.output(command.id)).toBe('queued while away\n');
    expect(state.deliveries).toBe(1);
    expect(lines.join('\n')).toContain(`connected over WebSocket ws://127.0.0.1:${server.port}/socket`);
    expect(longPolls()).toEqual([]);
    expect(server.backend.polls.every((p) => p.wait === 0)).toBe(true);
    expect(server.backend.heartbeatCount('http')).toBe(0);
    expect(lines.join('\n')).not.toContain(server.backend.target.token);
  });

  it('runs a command on a pushed wake and posts its output and completion once', async () => {
    // Prepare
    const { lines } = await start();
    await connected(lines);
    await until('the drain on open', () => server.backend.polls.length >= 1);
    const drainsBefore = server.backend.polls.length;
    // Act
    const queuedAt = Date.now();
    const command = enqueue({ script: 'echo pushed' });
    const state = await completed(command.id);
    // Assess
    expect(state.completion).toMatchObject({ exit_code: 0 });
    expect(server.backend.output(command.id)).toBe('pushed\n');
    expect(state.completeCalls).toBe(1);
    expect(state.deliveries).toBe(1);
    expect(server.backend.outputRequests.filter((r) => r.id === command.id)).toHaveLength(1);
    const drain = server.backend.polls.slice(drainsBefore);
    expect(drain[0]).toMatchObject({ wait: 0, max: 4 });
    expect(drain[0]!.at - queuedAt).toBeLessThan(1000);
    expect(longPolls()).toEqual([]);
  });

  it('reconnects at once after the server closes the socket, drains, and runs nothing twice', async () => {
    // Prepare: wakes are not pushed, so only the drain after the reconnect can find the command
    const { lines } = await start();
    await connected(lines);
    const ran = join(dir, 'ran');
    const command = enqueue({ script: `echo run >> ${ran}; echo start; sleep 1; echo end` });
    await until('the command to start', () => server.backend.command(command.id).chunks.length > 0);
    server.backend.autoWake = false;
    const later = enqueue({ script: 'echo later' });
    await sleep(300);
    const laterBefore = server.backend.command(later.id).deliveries;
    // Act: API Gateway's "Going away" mid-command; the server also hands the running command out again
    const droppedAt = Date.now();
    server.backend.closeSocket(targetId(), 1001);
    server.backend.redeliver(command.id);
    await connected(lines, 2);
    const reconnectedAfter = Date.now() - droppedAt;
    const state = await completed(command.id);
    await completed(later.id);
    // Assess
    expect(laterBefore).toBe(0);
    expect(reconnectedAfter).toBeLessThan(2000);
    expect(state.completion).toMatchObject({ exit_code: 0 });
    expect(server.backend.output(command.id)).toBe('start\nend\n');
    expect(state.violations).toEqual([]);
    expect(await readFile(ran, 'utf8')).toBe('run\n');
    expect(server.backend.output(later.id)).toBe('later\n');
    expect(lines.join('\n')).toContain('WebSocket closed (code 1001 Going away); reconnecting');
    expect(server.backend.connections).toHaveLength(2);
    expect(server.backend.channelCalls).toBe(2);
  });

  it('falls back to long polling when the upgrade is refused, says so once, and returns to the socket', async () => {
    // Prepare
    server.backend.refuseUpgrades(true);
    const { lines } = await start({ socketRetrySeconds: 2 });
    // Act
    await until('the fallback', () => lines.some((l) => l.includes('falling back to HTTP long polling')), 10_000);
    const command = enqueue({ script: 'echo polled' });
    await completed(command.id);
    const pollsInFallback = longPolls().length;
    server.backend.refuseUpgrades(false);
    await connected(lines);
    const pollsAtReconnect = longPolls().length; // the one in flight may still end after this
    const pushed = enqueue({ script: 'echo pushed again' });
    await completed(pushed.id);
    // Assess
    const log = lines.join('\n');
    expect(server.backend.upgradesRefusedCount).toBeGreaterThanOrEqual(3);
    expect(log).toMatch(
      new RegExp(
        `WebSocket unavailable at ws://127\\.0\\.0\\.1:${server.port}/socket \\(.+\\); falling back to HTTP long polling \\(GET /api/v1/agent/commands\\?wait=1\\); trying the WebSocket again in 2 s`,
      ),
    );
    expect(log.match(/falling back to HTTP long polling/g)).toHaveLength(1);
    expect(server.backend.output(command.id)).toBe('polled\n');
    expect(pollsInFallback).toBeGreaterThan(0);
    expect(server.backend.heartbeatCount('http')).toBeGreaterThan(0);
    expect(log).toContain(
      `WebSocket available again at ws://127.0.0.1:${server.port}/socket; stopped HTTP long polling`,
    );
    expect(server.backend.output(pushed.id)).toBe('pushed again\n');
    await sleep(1500);
    expect(longPolls().length).toBeLessThanOrEqual(pollsAtReconnect + 1);
  });

  it('after an outage of a socket that worked, polls meanwhile and tries the socket again soon', async () => {
    // Prepare: connected once, then the socket goes away and upgrades fail (a server restarting). The retry after an
    // outage is shortened to 3 s here (30 s by default); socketRetrySeconds keeps its 10 minutes.
    const { lines } = await start({ socketRetryAfterOutageSeconds: 3 });
    await connected(lines);
    server.backend.refuseUpgrades(true);
    server.backend.closeSocket(targetId(), 1012);
    // Act
    await until('the fallback', () => lines.some((l) => l.includes('falling back to HTTP long polling')), 20_000);
    const fellBackAt = Date.now();
    server.backend.refuseUpgrades(false);
    await until('the socket again', () => connectedLines(lines).length >= 2, 20_000);
    // Assess: not the 10 minutes of a socket that never opened (a proxy that blocks upgrades)
    expect(lines.join('\n')).toContain('trying the WebSocket again in 3 s');
    expect(Date.now() - fellBackAt).toBeLessThan(15_000);
  }, 40_000);

  it('never opens a socket with transport polling', async () => {
    // Prepare
    const { lines } = await start({ transport: 'polling' });
    // Act
    const command = enqueue({ script: 'echo polling only' });
    await completed(command.id);
    // Assess
    expect(server.backend.channelCalls).toBe(0);
    expect(server.backend.connections).toEqual([]);
    expect(longPolls().length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain('WebSocket');
  });

  it('keeps trying the socket with transport websocket and never polls', async () => {
    // Prepare
    server.backend.refuseUpgrades(true);
    const { lines } = await start({ transport: 'websocket' });
    // Act
    await until('four refused upgrades', () => server.backend.upgradesRefusedCount >= 4, 15_000);
    server.backend.refuseUpgrades(false);
    await connected(lines);
    const command = enqueue({ script: 'echo over the socket' });
    await completed(command.id);
    // Assess
    expect(lines.join('\n')).not.toContain('falling back');
    expect(longPolls()).toEqual([]);
    expect(server.backend.output(command.id)).toBe('over the socket\n');
  });

  it('polls, saying so, when the server offers no socket', async () => {
    // Prepare
    server.backend.channelAnswer = { socket_url: null };
    // Act
    const { lines } = await start();
    const command = enqueue({ script: 'echo no socket' });
    await completed(command.id);
    // Assess
    expect(lines.join('\n')).toContain('(the server offers no WebSocket); falling back to HTTP long polling');
    expect(server.backend.connections).toEqual([]);
    expect(longPolls().length).toBeGreaterThan(0);
  });

  it('polls when the server has no channel endpoint (404)', async () => {
    // Prepare
    server.backend.failNext(1, 404, { path: /\/agent\/channel$/ });
    // Act
    const { lines } = await start();
    const command = enqueue({ script: 'echo older server' });
    await completed(command.id);
    // Assess
    expect(lines.join('\n')).toContain('(the server has no channel endpoint); falling back to HTTP long polling');
    expect(server.backend.connections).toEqual([]);
  });

  it('waits before reconnecting when another connection replaced it, and warns', async () => {
    // Prepare
    const { lines } = await start({ replacedWaitSeconds: 1.5 });
    await connected(lines);
    // Act: a second process with the same token connects
    const other = new WsClient(`ws://127.0.0.1:${server.port}/socket`, {
      headers: { authorization: `Bearer ${server.backend.target.token}` },
    });
    await new Promise((resolve, reject) => other.once('open', resolve).once('error', reject));
    const replacedAt = Date.now();
    await until('the warning', () => lines.some((l) => l.includes('another agent process connected')));
    await sleep(800);
    const connectionsWhileWaiting = server.backend.connections.length;
    other.close();
    await until('the reconnect', () => server.backend.connections.length === 3, 10_000);
    // Assess
    expect(connectionsWhileWaiting).toBe(2);
    expect(server.backend.connections.at(-1)!.at - replacedAt).toBeGreaterThanOrEqual(1400);
    expect(lines.join('\n')).toContain(
      "another agent process connected with this target's token and replaced this connection; connecting again in 1.5 s",
    );
    expect(server.backend.connections[0]!.closedWith).toBe(4000);
  });

  it('stops with exit code 1 when the target is revoked and it cannot enroll again', async () => {
    // Prepare
    const first = await start();
    await first.agent.stop();
    const { agent, lines } = await start({ enrollToken: undefined });
    await connected(lines);
    const connectionsBefore = server.backend.connections.length;
    // Act
    server.backend.revoke(targetId());
    const code = await agent.exited;
    // Assess
    expect(code).toBe(1);
    const log = lines.join('\n');
    expect(log).toContain('the server revoked this connection (the target was deleted)');
    expect(log).toContain(
      'The server refused the agent token (the target was deleted or the server data was reset). Start the agent again with --enroll TOKEN.',
    );
    expect(server.backend.connections).toHaveLength(connectionsBefore); // no blind reconnect
  });

  it('pings over the socket at the idle cadence, and heartbeats every heartbeat_seconds while busy', async () => {
    // Prepare: the server's answer asks for shorter intervals than the agent's own
    server.backend.channelAnswer = { heartbeat_seconds: 0.3, idle_ping_seconds: 1 };
    const { lines } = await start({ heartbeatSeconds: 15 });
    await connected(lines);
    // Act: idle for a while, then a command for a while
    await sleep(3200);
    const idle = server.backend.heartbeats.filter((h) => h.via === 'socket');
    const command = enqueue({ script: 'sleep 1.5' });
    await completed(command.id);
    const busy = server.backend.heartbeats.filter((h) => h.via === 'socket' && h.running.includes(command.id));
    // Assess
    const gaps = (beats: { at: number }[]) => beats.slice(1).map((b, i) => b.at - beats[i]!.at);
    expect(idle.length).toBeGreaterThanOrEqual(2);
    expect(idle.length).toBeLessThanOrEqual(4);
    for (const gap of gaps(idle)) expect(gap).toBeGreaterThanOrEqual(900);
    expect(busy.length).toBeGreaterThanOrEqual(3);
    for (const gap of gaps(busy)) expect(gap).toBeLessThan(700);
    expect(server.backend.heartbeatCount('http')).toBe(0);
  });

  it('heartbeats over HTTP while busy and the socket is down', async () => {
    // Prepare
    const { lines } = await start({ transport: 'websocket', heartbeatSeconds: 0.3 });
    await connected(lines);
    const command = enqueue({ script: 'sleep 2' });
    await until('the command to run', () => lines.some((l) => l.includes(`running ${command.id}`)));
    // Act
    server.backend.refuseUpgrades(true);
    server.backend.closeSocket(targetId(), 1001);
    await completed(command.id);
    // Assess
    const http = server.backend.heartbeats.filter((h) => h.via === 'http');
    expect(http.length).toBeGreaterThanOrEqual(2);
    expect(http.some((h) => h.running.includes(command.id))).toBe(true);
  });

  it('stop() closes the socket with 1000 once running commands are done', async () => {
    // Prepare
    const { agent, lines } = await start();
    await connected(lines);
    const command = enqueue({ script: 'sleep 0.6; echo done' });
    await until('the command to run', () => lines.some((l) => l.includes(`running ${command.id}`)));
    // Act
    const stopped = agent.stop({ graceSeconds: 5 });
    await sleep(200);
    const openWhileRunning = server.backend.connected(targetId());
    await stopped;
    await until('the close to reach the server', () => server.backend.connections[0]!.closedWith !== undefined);
    // Assess
    expect(openWhileRunning).toBe(true);
    expect(server.backend.command(command.id).completion).toMatchObject({ exit_code: 0 });
    expect(server.backend.connections[0]!.closedWith).toBe(1000);
    expect(await agent.exited).toBe(0);
    expect(lines.at(-1)).toMatch(/\[test-agent\] stopped$/);
  });
});
