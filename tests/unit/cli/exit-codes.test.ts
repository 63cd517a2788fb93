import { describe, expect, it } from 'vitest';
import { createApi } from '../../../cli/api.js';
import { describeError, run } from '../../../cli/cli.js';
import { isLoopback, type Io } from '../../../cli/command.js';
import { EXIT, exitCodeOfState, exitCodeOfStatus, RefusedError } from '../../../cli/errors.js';

const fakeIo = (env: Record<string, string> = {}) => {
  const io = {
    env,
    out: '',
    err: '',
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
    stdoutTty: false,
    stderrTty: false,
    prompt: async () => undefined,
    newId: () => 'id-1',
  };
  return io satisfies Io;
};

describe('exit codes', () => {
  it.each([
    ['success', EXIT.ok],
    ['failed', EXIT.failed],
    ['rolled_back', EXIT.failed],
    ['cancelled', EXIT.cancelled],
  ])('a deployment ending %s exits %i', (state, code) => {
    expect(exitCodeOfState(state)).toBe(code);
  });

  it.each([
    [400, EXIT.refused],
    [401, EXIT.refused],
    [403, EXIT.refused],
    [404, EXIT.refused],
    [409, EXIT.refused],
    [422, EXIT.refused],
    [429, EXIT.unreachable],
    [500, EXIT.unreachable],
    [503, EXIT.unreachable],
  ])('HTTP %i exits %i', (status, code) => {
    expect(exitCodeOfStatus(status)).toBe(code);
  });

  it('usage errors exit 2 with the usage line; no command prints the help on stderr', async () => {
    const io = fakeIo({ DEPLOYER_URL: 'http://localhost:1', DEPLOYER_API_KEY: 'k' });
    expect(await run(['deploy', '--wat'], io)).toBe(EXIT.usage);
    expect(io.err).toContain('unknown flag --wat');
    expect(io.err).toContain('Usage: deployer deploy');
    const none = fakeIo();
    expect(await run([], none)).toBe(EXIT.usage);
    expect(none.err).toContain('Exit codes:');
    const bad = fakeIo();
    expect(await run(['deplyo'], bad)).toBe(EXIT.usage);
    expect(bad.err).toContain('unknown command "deplyo"');
  });

  it('missing configuration is a usage error naming what to set', async () => {
    const io = fakeIo();
    expect(await run(['status', 'x'], io)).toBe(EXIT.usage);
    expect(io.err).toContain('set DEPLOYER_URL or pass --url');
    const noKey = fakeIo({ DEPLOYER_URL: 'http://localhost:1', HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent' });
    expect(await run(['status', 'x'], noKey)).toBe(EXIT.usage);
    expect(noKey.err).toContain('no credentials for http://localhost:1');
  });

  it('refuses plain http to anything but this machine, unless DEPLOYER_ALLOW_HTTP=1', async () => {
    const io = fakeIo({ DEPLOYER_URL: 'http://deployer.example.com', DEPLOYER_API_KEY: 'k' });
    expect(await run(['status', 'x'], io)).toBe(EXIT.usage);
    expect(io.err).toContain('refusing to send credentials over plain http to deployer.example.com');
    expect(isLoopback('127.0.0.1') && isLoopback('localhost') && isLoopback('[::1]')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
  });

  it('a refusal prints the envelope code and message, and the freeze details', () => {
    const error = new RefusedError(409, 'DEPLOYMENT_FROZEN', 'Deployments are frozen.', {
      active_freezes: [{ id: 'f', name: 'Year end', ends_at: '2027-01-03T00:00:00Z' }],
      can_override: true,
    });
    expect(describeError(error)).toBe(
      'deployer: refused (409 DEPLOYMENT_FROZEN): Deployments are frozen.\n' +
        '  frozen by "Year end" until 2027-01-03T00:00:00Z\n' +
        '  an admin may pass --override-freeze --reason TEXT',
    );
  });

  it('reads are retried on 5xx, then exit 4; writes are never retried', async () => {
    let calls = 0;
    const fetchImpl = (async () => {
      calls += 1;
      return new Response('{"error":{"code":"INTERNAL_ERROR","message":"x"}}', { status: 500 });
    }) as typeof fetch;
    const api = createApi('http://svc', { token: async () => 't' }, async () => undefined, fetchImpl);
    await expect(api.get('/deployments/x')).rejects.toMatchObject({ exitCode: EXIT.unreachable });
    expect(calls).toBe(5);
    calls = 0;
    await expect(api.post('/deployments', {})).rejects.toMatchObject({ exitCode: EXIT.unreachable });
    expect(calls).toBe(1);
  });

  it('a 4xx envelope becomes a refusal with its code; a plain-text 429 is busy (exit 4)', async () => {
    const answers = [
      new Response('{"error":{"code":"VALIDATION_ERROR","message":"bad"}}', { status: 400 }),
      new Response('Too Many Requests', { status: 429 }),
    ];
    const fetchImpl = (async () => answers.shift()) as unknown as typeof fetch;
    const api = createApi('http://svc', undefined, async () => undefined, fetchImpl);
    await expect(api.post('/deployments', {})).rejects.toMatchObject({
      exitCode: EXIT.refused,
      code: 'VALIDATION_ERROR',
    });
    await expect(api.post('/deployments', {})).rejects.toMatchObject({ exitCode: EXIT.unreachable });
  });
});
