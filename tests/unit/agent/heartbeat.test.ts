// The agent's heartbeat loop over an open socket: a frame per beat, naming the commands running and the agent's
// target (so the server records it in one conditional write).
import { describe, expect, it } from 'vitest';
import type { AgentClient } from '../../../agent/client.js';
import { Heartbeats } from '../../../agent/heartbeat.js';

/** Resolves once `done` holds (checked every 5 ms), or fails after 5 s. */
const until = async (done: () => boolean) => {
  for (const deadline = Date.now() + 5000; !done(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() > deadline) throw new Error('timed out');
};

describe('Heartbeats over an open socket', () => {
  it('sends frames naming the running commands and the target, at the busy cadence', async () => {
    // Arrange: a busy agent whose socket is open
    const sent: unknown[] = [];
    const socket = { readyState: WebSocket.OPEN, send: (frame: string) => sent.push(JSON.parse(frame)) };
    let target = 't-1';
    const beats = new Heartbeats({
      client: {} as AgentClient,
      log: () => undefined,
      busy: () => true,
      running: () => ['c-1'],
      socket: () => socket as unknown as WebSocket,
      targetId: () => target,
      heartbeatMs: 20,
      idlePingMs: 1000,
    });
    beats.setLink('socket');
    const stop = new AbortController();
    // Act: a few beats, the target changing between them (the agent enrolled again)
    const loop = beats.loop(stop.signal);
    await until(() => sent.length >= 2);
    target = 't-2';
    const seen = sent.length;
    await until(() => sent.length > seen);
    stop.abort();
    await loop;
    // Assess
    expect(sent[0]).toEqual({ action: 'heartbeat', running_command_ids: ['c-1'], target_id: 't-1' });
    expect(sent.at(-1)).toEqual({ action: 'heartbeat', running_command_ids: ['c-1'], target_id: 't-2' });
  });
});
