import { describe, expect, it } from 'vitest';
import { CliError, parseCli, USAGE } from '../../../agent/cli.js';

const environment = { hostname: 'web-01.example', cwd: '/srv/agent', env: {} as NodeJS.ProcessEnv };

const run = (argv: string[], env = environment) => {
  const command = parseCli(argv, env);
  if (command.kind !== 'run') throw new Error(`expected run, got ${command.kind}`);
  return command.options;
};

describe('parseCli', () => {
  it('reads every option', () => {
    // Act
    const options = run([
      '--server',
      'http://localhost:3000/',
      '--enroll',
      'det_abc',
      '--name',
      'local-1',
      '--tag',
      'env=local',
      '--tag',
      'role=web',
      '--concurrency',
      '2',
      '--state-dir',
      'state',
      '--work-dir',
      '/tmp/work',
      '--heartbeat-seconds',
      '5',
      '--poll-wait-seconds',
      '10',
      '--kill-grace-seconds',
      '1',
      '--shutdown-grace-seconds',
      '3',
      '--transport',
      'polling',
    ]);
    // Assess
    expect(options).toEqual({
      server: 'http://localhost:3000',
      enrollToken: 'det_abc',
      name: 'local-1',
      tags: [
        { key: 'env', value: 'local' },
        { key: 'role', value: 'web' },
      ],
      concurrency: 2,
      stateDir: '/srv/agent/state',
      workDir: '/tmp/work',
      heartbeatSeconds: 5,
      pollWaitSeconds: 10,
      killGraceSeconds: 1,
      shutdownGraceSeconds: 3,
      transport: 'polling',
      enrollOnly: false,
    });
  });

  it('defaults the name to the host name, the state under .local/agents/<name>, and work under the state', () => {
    // Act
    const options = run(['--server', 'https://deployer.example.com']);
    // Assess
    expect(options.name).toBe('web-01.example');
    expect(options.stateDir).toBe('/srv/agent/.local/agents/web-01.example');
    expect(options.workDir).toBe('/srv/agent/.local/agents/web-01.example/work');
    expect(options.concurrency).toBe(4);
    expect(options.enrollOnly).toBe(false);
    expect(run(['--server', 'https://deployer.example.com', '--enroll-only']).enrollOnly).toBe(true);
    expect(options.heartbeatSeconds).toBe(25);
    expect(options.transport).toBe('auto');
    expect(options.tags).toEqual([]);
    expect(options.enrollToken).toBeUndefined();
  });

  it('keeps a name with odd characters to one directory level', () => {
    expect(run(['--server', 'http://x', '--name', '../evil/name']).stateDir).toBe(
      '/srv/agent/.local/agents/__evil_name',
    );
  });

  it('takes the enrollment token from the environment when --enroll is absent', () => {
    // Act
    const options = run(['--server', 'http://x'], { ...environment, env: { DEPLOYER_AGENT_ENROLL_TOKEN: 'det_env' } });
    // Assess
    expect(options.enrollToken).toBe('det_env');
  });

  it('keeps a value containing "=" whole', () => {
    expect(run(['--server', 'http://x', '--tag', 'url=a=b']).tags).toEqual([{ key: 'url', value: 'a=b' }]);
  });

  it.each([
    [[], '--server URL is required'],
    [['--server', 'localhost:3000'], 'http:// or https://'],
    [['--server', 'not a url'], 'must be a URL'],
    [['--server', 'http://x', '--tag', 'novalue'], 'KEY=VALUE'],
    [['--server', 'http://x', '--tag', '=v'], 'KEY=VALUE'],
    [['--server', 'http://x', '--tag=-bad=v'], "tag key '-bad'"],
    [['--server', 'http://x', '--tag', 'a=1', '--tag', 'a=2'], "tag 'a' is given twice"],
    [['--server', 'http://x', '--concurrency', '0'], '--concurrency must be a whole number >= 1'],
    [['--server', 'http://x', '--concurrency', '1.5'], '--concurrency must be a whole number >= 1'],
    [['--server', 'http://x', '--heartbeat-seconds', 'soon'], '--heartbeat-seconds'],
    [['--server', 'http://x', '--transport', 'carrier-pigeon'], '--transport must be one of auto, websocket, polling'],
    [['--server', 'http://x', '--bogus'], "Unknown option '--bogus'"],
    [['--server', 'http://x', 'extra'], 'extra'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseCli(argv, environment)).toThrow(CliError);
    expect(() => parseCli(argv, environment)).toThrow(message);
  });

  it('answers --help and --version without needing a server', () => {
    expect(parseCli(['--help'], environment)).toEqual({ kind: 'help' });
    expect(parseCli(['-h'], environment)).toEqual({ kind: 'help' });
    expect(parseCli(['--version'], environment)).toMatchObject({
      kind: 'version',
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    });
    expect(USAGE).toContain('--enroll TOKEN');
    // --tag is kept for compatibility; the help says the server applies the enrollment token's tags instead
    expect(USAGE).toMatch(
      /--tag KEY=VALUE +accepted for compatibility and not applied: the server gives a target its\s+enrollment token's tags/,
    );
    expect(USAGE).toMatch(/--transport MODE +auto: [^]*websocket: [^]*polling: HTTP long polling only/);
  });
});
