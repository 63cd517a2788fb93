// The auto-update's version rules (agent/update.ts, on the semver package): which releases an agent takes (newer by
// semver precedence, same major version, within the server's accepted range), as a table; the updater against a fake agent
// (installs over its file once idle, refuses bytes that do not match), and the download's own-server rule.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseCli } from '../../../agent/cli.js';
import { AgentClient } from '../../../agent/client.js';
import type { AgentReleaseInfo } from '../../../protocol/messages.js';
import { startUpdater, updateRefusal } from '../../../agent/update.js';

describe('updateRefusal', () => {
  it.each([
    ['1.0.0', '1.0.1', '>=1.0.0 <2.0.0', undefined],
    ['1.0.0', '1.3.0', undefined, undefined],
    ['1.0.0-rc.1', '1.0.0', '>=1.0.0 <2.0.0', undefined],
    ['1.0.1', '1.0.1', '>=1.0.0 <2.0.0', '1.0.1 is not newer than 1.0.1'],
    ['1.2.0', '1.1.9', '>=1.0.0 <2.0.0', '1.1.9 is not newer than 1.2.0'],
    ['1.0.0', '2.0.0', undefined, '2.0.0 is of another major version than 1.0.0'],
    ['1.0.0', '1.5.0', '>=1.0.0 <1.5.0', '1.5.0 is not among the versions the server accepts (>=1.0.0 <1.5.0)'],
    ['1.0.0', 'next', undefined, 'next is not a version this agent can compare'],
    ['1.0.0', '1.0.0; rm -rf /', undefined, '1.0.0; rm -rf / is not a version this agent can compare'],
    ['1.0.0-beta.2', '1.0.0-beta.11', '>=1.0.0-0 <2.0.0', undefined],
    ['1.0.0', '1.0.1-rc.1', '>=1.0.0 <2.0.0', undefined],
    ['1.0.0', '1.2.0', 'nonsense', '1.2.0 is not among the versions the server accepts (nonsense)'],
    ['1.0.10', '1.0.9', undefined, '1.0.9 is not newer than 1.0.10'],
  ])('an agent %s offered %s (accepted %s): %s', (own, release, accepted, expected) => {
    expect(updateRefusal(own, release, accepted)).toBe(expected);
  });
});

describe('--auto-update', () => {
  const environment = { hostname: 'h', cwd: '/tmp', env: {} };

  it('is off unless given, and checks hourly by default', () => {
    const off = parseCli(['--server', 'http://s'], environment);
    const on = parseCli(['--server', 'http://s', '--auto-update'], environment);
    expect(off.kind === 'run' && off.options.autoUpdateMinutes).toBeUndefined();
    expect(on.kind === 'run' && on.options.autoUpdateMinutes).toBe(60);
  });

  it('takes another period, and refuses a nonsense one', () => {
    const every = parseCli(['--server', 'http://s', '--auto-update', '--auto-update-minutes', '5'], environment);
    expect(every.kind === 'run' && every.options.autoUpdateMinutes).toBe(5);
    expect(() =>
      parseCli(['--server', 'http://s', '--auto-update', '--auto-update-minutes', 'x'], environment),
    ).toThrow(/--auto-update-minutes must be a number/);
  });
});

describe('startUpdater', () => {
  const NEW = new TextEncoder().encode('#!/usr/bin/env node\nconsole.log("1.0.1")\n');
  const hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
  const release = (overrides: Partial<AgentReleaseInfo> = {}): AgentReleaseInfo => ({
    version: '1.0.1',
    sha256: hex(NEW),
    size: NEW.length,
    url: '/agent/v1.0.1/deployer-agent.mjs',
    ...overrides,
  });

  const setUp = async (answer: AgentReleaseInfo | null) => {
    const folder = await mkdtemp(join(tmpdir(), 'deployer-update-'));
    const file = join(folder, 'deployer-agent.mjs');
    await writeFile(file, 'old', { mode: 0o750 });
    const lines: string[] = [];
    const fake = {
      busy: false,
      stops: [] as (number | undefined)[],
      downloads: [] as string[],
      channel: async () => ({
        socket_url: null,
        heartbeat_seconds: 15,
        idle_ping_seconds: 25,
        poll_wait_seconds: 20,
        release: answer,
        accepted: '>=1.0.0 <2.0.0',
      }),
      download: async (url: string) => {
        fake.downloads.push(url);
        return NEW;
      },
      stop: async (o?: { graceSeconds?: number }) => void fake.stops.push(o?.graceSeconds),
    };
    const updater = startUpdater({
      agent: fake,
      version: '1.0.0',
      file,
      everyMs: 3_600_000,
      log: (line) => lines.push(line),
      idleCheckMs: 10,
    });
    return { folder, file, lines, fake, updater };
  };

  it('installs a newer release over its file (mode kept) and stops only once the agent is idle', async () => {
    // Prepare: busy while the release arrives
    const { folder, file, fake, updater } = await setUp(release());
    fake.busy = true;
    try {
      // Act
      await vi.waitFor(async () => expect(await readFile(file, 'utf8')).toContain('1.0.1'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopsWhileBusy = fake.stops.length;
      fake.busy = false;
      await vi.waitFor(() => expect(fake.stops).toHaveLength(1));
      // Assess
      expect(stopsWhileBusy).toBe(0);
      expect(updater.installed).toBe('1.0.1');
      expect((await stat(file)).mode & 0o777).toBe(0o750);
      expect(await readdir(folder)).toEqual(['deployer-agent.mjs']);
    } finally {
      updater.dispose();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('keeps its file and runs on when the bytes do not match the checksum, and does not download them again', async () => {
    // Prepare
    const { folder, file, lines, fake, updater } = await setUp(release({ sha256: 'a'.repeat(64) }));
    try {
      // Act
      await vi.waitFor(() => expect(lines.join('\n')).toContain('does not match'));
      updater.consider(release({ sha256: 'a'.repeat(64) }), '>=1.0.0 <2.0.0');
      // Assess
      expect(await readFile(file, 'utf8')).toBe('old');
      expect(fake.stops).toEqual([]);
      expect(fake.downloads).toHaveLength(1);
      expect(updater.installed).toBeUndefined();
      expect(lines.join('\n')).toContain('keeping 1.0.0');
    } finally {
      updater.dispose();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('downloads nothing when the release is not newer, or none is shipped', async () => {
    for (const answer of [release({ version: '1.0.0' }), release({ version: '2.0.0' }), null]) {
      const { folder, fake, updater } = await setUp(answer);
      try {
        await updater.check();
        expect(fake.downloads).toEqual([]);
      } finally {
        updater.dispose();
        await rm(folder, { recursive: true, force: true });
      }
    }
  });
});

describe('AgentClient.download', () => {
  it('sends its token only to its own server', async () => {
    // Prepare
    const seen: string[] = [];
    const client = new AgentClient({
      server: 'http://server.example:3000',
      fetch: (async (input: string) => {
        seen.push(String(input));
        return new Response('bytes');
      }) as unknown as typeof fetch,
      log: () => undefined,
    });
    client.setToken('dat_secret');
    // Act
    const own = await client.download('/agent/v1.0.1/deployer-agent.mjs', 100, AbortSignal.timeout(1000));
    const elsewhere = client.download('http://evil.example/agent.mjs', 100, AbortSignal.timeout(1000));
    // Assess
    expect(new TextDecoder().decode(own)).toBe('bytes');
    await expect(elsewhere).rejects.toThrow(/not on the server/);
    expect(seen).toEqual(['http://server.example:3000/agent/v1.0.1/deployer-agent.mjs']);
  });
});
