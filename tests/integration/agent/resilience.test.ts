// The agent through server trouble: 503s, then the server gone (connection refused) and back on the same port.
// Nothing may be lost and nothing run twice.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAgentServer, type FakeAgentServer } from '../../support/fake-agent-server.js';
import { removeDir, startTestAgent, tempDir, until, type TestAgent } from './helpers.js';

let server: FakeAgentServer;
let dir: string;
let running: TestAgent | undefined;

beforeEach(async () => {
  server = await startFakeAgentServer();
  dir = await tempDir('agent-resilience-');
});
afterEach(async () => {
  await running?.agent.stop({ graceSeconds: 0 });
  running = undefined;
  await server.close();
  await removeDir(dir);
});

describe('agent resilience', () => {
  it('loses no output and runs nothing twice through 503s and a server restart', async () => {
    // Prepare
    running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state') });
    const { backend } = server;
    const ran = join(dir, 'ran');
    const command = backend.enqueue(backend.target.id, {
      script: `echo run >> ${ran}; for i in $(seq 1 40); do echo "line $i"; [ $((i % 3)) -eq 0 ] && echo "warn $i" >&2; sleep 0.05; done`,
    });
    await until('the first output', () => backend.command(command.id).chunks.length > 0);
    // Act: every request fails with 503 for a while, then the server is gone, then it is back on the same port
    backend.failNext(100_000, 503);
    await new Promise((r) => setTimeout(r, 800));
    await server.close();
    backend.clearFailures();
    await new Promise((r) => setTimeout(r, 1500));
    server = await startFakeAgentServer(backend, server.port);
    await until('the completion', () => backend.command(command.id).completion !== undefined, 20_000);
    // Assess
    const state = backend.command(command.id);
    expect(state.completion).toMatchObject({ exit_code: 0 });
    expect(state.violations).toEqual([]);
    expect(state.chunks.map((c) => c.seq)).toEqual(state.chunks.map((_, i) => i));
    expect(backend.output(command.id, 'stdout')).toBe(Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(backend.output(command.id, 'stderr')).toBe(
      Array.from({ length: 13 }, (_, i) => `warn ${(i + 1) * 3}\n`).join(''),
    );
    expect(state.chunksAtCompletion).toBe(state.chunks.length);
    expect(state.deliveries).toBe(1);
    expect(await readFile(ran, 'utf8')).toBe('run\n');
    const log = running.lines.join('\n');
    expect(log.match(/cannot reach the server/g)).toHaveLength(1);
    expect(log.match(/reconnected to the server after \d+\.\d s/g)).toHaveLength(1);
    // Assess: it keeps working afterwards
    const next = backend.enqueue(backend.target.id, { script: 'echo after' });
    await until('the next command', () => backend.command(next.id).completion !== undefined);
    expect(backend.output(next.id)).toBe('after\n');
  });

  it('keeps a completion the server never acknowledged and sends it at the next start', async () => {
    // Prepare
    running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state'), flushTimeoutSeconds: 1 });
    const { backend } = server;
    const command = backend.enqueue(backend.target.id, { script: 'sleep 0.5; echo done' });
    await until('the command to start', () => running!.lines.some((l) => l.includes(`running ${command.id}`)));
    backend.failNext(100_000, 503, { path: /\/complete$/ });
    // Act
    await until('a refused completion', () => backend.command(command.id).chunks.length > 0);
    await new Promise((r) => setTimeout(r, 300));
    await running.agent.stop({ graceSeconds: 5 });
    const before = backend.command(command.id).completion;
    backend.clearFailures();
    running = await startTestAgent({ server: server.url, stateDir: join(dir, 'state'), enrollToken: undefined });
    await until('the completion', () => backend.command(command.id).completion !== undefined);
    // Assess
    expect(before).toBeUndefined();
    expect(backend.command(command.id).completion).toMatchObject({ exit_code: 0 });
    expect(backend.output(command.id)).toBe('done\n');
    expect(running.lines.join('\n')).toContain(`re-sending the completion of ${command.id}`);
  });
});
