// The agent names its version on every request, and a refusal of that version (409 AGENT_VERSION_INCOMPATIBLE) is
// handed to onIncompatible with the server's message instead of being retried.
import { describe, expect, it } from 'vitest';
import { AgentClient, HttpError } from '../../../agent/client.js';
import { AGENT_VERSION_HEADER } from '../../../protocol/headers.js';
import { AGENT_VERSION } from '../../../agent/version.js';

const REFUSAL = {
  error: {
    code: 'AGENT_VERSION_INCOMPATIBLE',
    message: 'Agent 1.0.0 is not compatible with this server 2.0.0: it accepts agents >=2.0.0 <3.0.0.',
    details: { agent_version: '1.0.0', accepted: '>=2.0.0 <3.0.0', server_version: '2.0.0' },
  },
};

const answering = (status: number, body: unknown) => {
  const sent: Record<string, string>[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    sent.push(init.headers as Record<string, string>);
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, sent };
};

const client = (fetch: typeof globalThis.fetch, refusals: string[]) => {
  const c = new AgentClient({
    server: 'http://server',
    fetch,
    log: () => undefined,
    onIncompatible: (message) => refusals.push(message),
  });
  c.setToken('dpa_one');
  return c;
};

describe('the agent’s version on the wire', () => {
  it('is sent on authenticated calls and on registration', async () => {
    // Arrange
    const { fetch, sent } = answering(200, { server_time: 'now', target_id: 't', agent_token: 'dpa_x' });
    const c = client(fetch, []);
    // Act
    await c.heartbeat([]);
    await c.register(
      {
        enrollment_token: 'det_x',
        name: 'n',
        hostname: 'h',
        os: 'linux',
        arch: 'x64',
        agent_version: AGENT_VERSION,
        tags: [],
      },
      1000,
    );
    // Assess
    expect(sent.map((h) => h[AGENT_VERSION_HEADER])).toEqual([AGENT_VERSION, AGENT_VERSION]);
  });

  it('a refusal of the version goes to onIncompatible with the server’s message, once, and is not retried', async () => {
    // Arrange
    const { fetch, sent } = answering(409, REFUSAL);
    const refusals: string[] = [];
    const c = client(fetch, refusals);
    // Act
    const polled = c.poll(0, 1, new AbortController().signal);
    // Assess
    await expect(polled).rejects.toBeInstanceOf(HttpError);
    await expect(polled).rejects.toMatchObject({ status: 409, code: 'AGENT_VERSION_INCOMPATIBLE' });
    expect(refusals).toEqual([REFUSAL.error.message]);
    expect(sent).toHaveLength(1);
  });

  it('another 409 (a command no longer running) is not a version refusal', async () => {
    const { fetch } = answering(409, { error: { code: 'CONFLICT', message: 'The command is completed.' } });
    const refusals: string[] = [];
    await expect(client(fetch, refusals).output('c1', [{ stream: 'stdout', data: 'x', seq: 0 }])).rejects.toMatchObject(
      {
        code: 'CONFLICT',
      },
    );
    expect(refusals).toEqual([]);
  });
});
