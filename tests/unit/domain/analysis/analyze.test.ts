// The rule library against realistic failure output, as the tools print it.
import { describe, expect, it } from 'vitest';
import { analyzeFailure } from '../../../../domain/analysis/analyze.js';
import type { AnalysisInput } from '../../../../domain/analysis/model.js';
import { rules } from '../../../../domain/analysis/rules.js';

const NOW = new Date('2026-11-24T10:00:00.000Z');

interface Fixture {
  readonly name: string;
  readonly exit: number;
  readonly interpreter?: AnalysisInput['interpreter'];
  readonly stderr?: string;
  readonly stdout?: string;
  readonly error?: string;
  readonly rule: string;
  /** A word the summary or the likely cause must contain. */
  readonly says: RegExp;
}

const fixtures: readonly Fixture[] = [
  {
    name: 'sh: missing tool',
    exit: 127,
    stderr: 'deploy.sh: 3: kubectlx: not found',
    rule: 'command-not-found',
    says: /kubectlx/,
  },
  {
    name: 'bash: missing tool',
    exit: 127,
    interpreter: 'bash',
    stderr: '/tmp/w/script.sh: line 2: terraform: command not found',
    rule: 'command-not-found',
    says: /terraform/,
  },
  { name: 'zsh style', exit: 127, stderr: 'zsh: command not found: helm', rule: 'command-not-found', says: /helm/ },
  { name: 'exit 127 alone', exit: 127, stderr: '', rule: 'command-not-found', says: /does not exist/ },
  {
    name: 'interpreter missing',
    exit: 127,
    interpreter: 'python3',
    error: 'The interpreter python3 is not installed on this host',
    rule: 'interpreter-missing',
    says: /python3/,
  },
  {
    name: 'permission denied (script)',
    exit: 126,
    stderr: '/opt/app/bin/migrate: Permission denied',
    rule: 'permission-denied',
    says: /access/,
  },
  {
    name: 'EACCES node',
    exit: 1,
    interpreter: 'node',
    stderr: "Error: EACCES: permission denied, open '/etc/app/config.json'",
    rule: 'permission-denied',
    says: /access/,
  },
  {
    name: 'apt not root',
    exit: 100,
    stderr:
      'E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?',
    rule: 'apt-lock',
    says: /lock/,
  },
  {
    name: 'disk full (cp)',
    exit: 1,
    stderr: "cp: error writing '/var/www/release.tar': No space left on device",
    rule: 'no-space-left',
    says: /disk space/,
  },
  {
    name: 'disk full (docker)',
    exit: 1,
    stderr: 'failed to register layer: write /var/lib/docker/tmp/x: no space left on device',
    rule: 'no-space-left',
    says: /disk space/,
  },
  {
    name: 'quota',
    exit: 1,
    stderr: 'tar: ./data/blob: Cannot write: Disk quota exceeded',
    rule: 'disk-quota',
    says: /quota/,
  },
  { name: 'OOM killed', exit: 137, stderr: 'Killed', rule: 'out-of-memory', says: /memory/ },
  {
    name: 'node heap',
    exit: 134,
    interpreter: 'node',
    stderr: 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
    rule: 'out-of-memory',
    says: /memory/,
  },
  {
    name: 'timeout',
    exit: 124,
    error: 'Timed out after 30 s; the process group was killed',
    stdout: 'waiting for db...',
    rule: 'timeout',
    says: /timeout/,
  },
  { name: 'cancelled', exit: 130, error: 'Cancelled by the server', rule: 'cancelled', says: /cancelled/ },
  {
    name: 'agent lost',
    exit: -1,
    error: 'The agent restarted while the command was running',
    rule: 'agent-lost',
    says: /restarted/,
  },
  { name: 'segfault', exit: 139, stderr: 'Segmentation fault (core dumped)', rule: 'killed-by-signal', says: /signal/ },
  {
    name: 'curl refused',
    exit: 7,
    stderr: 'curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused',
    rule: 'connection-refused',
    says: /refused/,
  },
  {
    name: 'node ECONNREFUSED',
    exit: 1,
    interpreter: 'node',
    stderr: 'Error: connect ECONNREFUSED 10.0.0.5:5432\n    at TCPConnectWrap.afterConnect',
    rule: 'connection-refused',
    says: /refused/,
  },
  {
    name: 'curl timeout',
    exit: 28,
    stderr: 'curl: (28) Connection timed out after 10001 milliseconds',
    rule: 'connection-timeout',
    says: /timed out/,
  },
  {
    name: 'reset',
    exit: 56,
    stderr: 'curl: (56) Recv failure: Connection reset by peer',
    rule: 'connection-reset',
    says: /reset/,
  },
  {
    name: 'dns curl',
    exit: 6,
    stderr: 'curl: (6) Could not resolve host: artifacts.internal.example',
    rule: 'dns-failure',
    says: /resolved/,
  },
  {
    name: 'dns apt',
    exit: 100,
    stderr:
      "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'\nTemporary failure in name resolution",
    rule: 'dns-failure',
    says: /resolved/,
  },
  {
    name: 'tls curl',
    exit: 60,
    stderr: 'curl: (60) SSL certificate problem: unable to get local issuer certificate',
    rule: 'tls-certificate',
    says: /certificate/,
  },
  {
    name: 'tls go',
    exit: 1,
    stderr: 'Get "https://registry.internal/v2/": x509: certificate signed by unknown authority',
    rule: 'tls-certificate',
    says: /certificate/,
  },
  {
    name: 'http 404 curl',
    exit: 22,
    stderr: 'curl: (22) The requested URL returned error: 404',
    rule: 'http-client-error',
    says: /404/,
  },
  {
    name: 'http 403 wget',
    exit: 8,
    stderr:
      '--2026-11-24 10:00:00--  https://example.com/app.tgz\nHTTP request sent, awaiting response... 403 Forbidden\n2026-11-24 10:00:00 ERROR 403: Forbidden.',
    rule: 'http-client-error',
    says: /403/,
  },
  {
    name: 'http 503 curl',
    exit: 22,
    stderr: 'curl: (22) The requested URL returned error: 503',
    rule: 'http-server-error',
    says: /503/,
  },
  {
    name: 'apt missing package',
    exit: 100,
    stderr: 'Reading package lists...\nBuilding dependency tree...\nE: Unable to locate package nosuchpackage',
    rule: 'apt-missing-package',
    says: /nosuchpackage/,
  },
  {
    name: 'apt lock',
    exit: 100,
    stderr: 'E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1234 (unattended-upgr)',
    rule: 'apt-lock',
    says: /lock/,
  },
  {
    name: 'dpkg interrupted',
    exit: 100,
    stderr: "E: dpkg was interrupted, you must manually run 'dpkg --configure -a' to correct the problem.",
    rule: 'dpkg-interrupted',
    says: /interrupted/,
  },
  {
    name: 'dnf missing',
    exit: 1,
    stderr:
      'Last metadata expiration check: 0:01:02 ago.\nNo match for argument: nginxx\nError: Unable to find a match: nginxx',
    rule: 'dnf-missing-package',
    says: /nginxx/,
  },
  {
    name: 'npm 404',
    exit: 1,
    stderr: 'npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found',
    rule: 'npm-not-found',
    says: /npm/,
  },
  {
    name: 'npm eresolve',
    exit: 1,
    stderr: 'npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree',
    rule: 'npm-resolve',
    says: /dependency/,
  },
  {
    name: 'pip missing',
    exit: 1,
    stderr:
      'ERROR: Could not find a version that satisfies the requirement reqests (from versions: none)\nERROR: No matching distribution found for reqests',
    rule: 'pip-missing-package',
    says: /reqests/,
  },
  {
    name: 'pip pep668',
    exit: 1,
    stderr: 'error: externally-managed-environment\n\n× This environment is externally managed',
    rule: 'pip-externally-managed',
    says: /pip/,
  },
  {
    name: 'systemd failed',
    exit: 1,
    stderr:
      'Job for nginx.service failed because the control process exited with error code.\nSee "systemctl status nginx.service" and "journalctl -xeu nginx.service" for details.',
    rule: 'systemd-unit-failed',
    says: /nginx\.service/,
  },
  {
    name: 'systemd missing',
    exit: 5,
    stderr: 'Failed to restart appx.service: Unit appx.service not found.',
    rule: 'systemd-unit-missing',
    says: /appx\.service/,
  },
  {
    name: 'file not found',
    exit: 1,
    stderr: 'cat: /etc/app/release.env: No such file or directory',
    rule: 'file-not-found',
    says: /does not exist/,
  },
  {
    name: 'read-only fs',
    exit: 1,
    stderr: "touch: cannot touch '/usr/local/bin/app': Read-only file system",
    rule: 'read-only-fs',
    says: /read-only/,
  },
  {
    name: 'too many files',
    exit: 1,
    stderr: 'Error: EMFILE: too many open files, watch',
    rule: 'too-many-open-files',
    says: /descriptors/,
  },
  {
    name: 'port in use',
    exit: 1,
    interpreter: 'node',
    stderr: 'Error: listen EADDRINUSE: address already in use :::3000',
    rule: 'address-in-use',
    says: /port/,
  },
  {
    name: 'bash syntax',
    exit: 2,
    interpreter: 'bash',
    stderr: '/tmp/w/script.sh: line 7: syntax error: unexpected end of file',
    rule: 'shell-syntax-error',
    says: /syntax/,
  },
  {
    name: 'unbound',
    exit: 1,
    interpreter: 'bash',
    stderr: '/tmp/w/script.sh: line 3: RELEASE_TAG: unbound variable',
    rule: 'unbound-variable',
    says: /RELEASE_TAG/,
  },
  {
    name: 'python syntax',
    exit: 1,
    interpreter: 'python3',
    stderr: '  File "/tmp/w/script.py", line 4\n    print("x"\n         ^\nSyntaxError: \'(\' was never closed',
    rule: 'python-syntax-error',
    says: /parse/,
  },
  {
    name: 'python module',
    exit: 1,
    interpreter: 'python3',
    stderr:
      'Traceback (most recent call last):\n  File "/tmp/w/script.py", line 1, in <module>\n    import requests\nModuleNotFoundError: No module named \'requests\'',
    rule: 'python-module-missing',
    says: /requests/,
  },
  {
    name: 'python exception',
    exit: 1,
    interpreter: 'python3',
    stderr:
      'Traceback (most recent call last):\n  File "/tmp/w/script.py", line 9, in <module>\n    main()\nKeyError: \'version\'',
    rule: 'python-exception',
    says: /exception/,
  },
  {
    name: 'node module',
    exit: 1,
    interpreter: 'node',
    stderr: "node:internal/modules/cjs/loader:1228\n  throw err;\nError: Cannot find module 'express'",
    rule: 'node-module-missing',
    says: /express/,
  },
  {
    name: 'jest',
    exit: 1,
    stdout: 'Test Suites: 1 failed, 4 passed, 5 total\nTests:       2 failed, 31 passed, 33 total',
    rule: 'tests-failed',
    says: /test/i,
  },
  {
    name: 'go test',
    exit: 1,
    stdout: '--- FAIL: TestMigrate (0.01s)\nFAIL\nFAIL\texample.com/app\t0.012s',
    rule: 'tests-failed',
    says: /test/i,
  },
  {
    name: 'git https auth',
    exit: 128,
    stderr:
      "remote: Invalid username or password.\nfatal: Authentication failed for 'https://git.example.com/app.git/'",
    rule: 'git-auth',
    says: /authenticate/,
  },
  {
    name: 'git ssh key',
    exit: 128,
    stderr: 'git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.',
    rule: 'git-auth',
    says: /authenticate/,
  },
  {
    name: 'git ref',
    exit: 128,
    stderr: "fatal: couldn't find remote ref release/9.9",
    rule: 'git-not-found',
    says: /ref/,
  },
  {
    name: 'docker daemon',
    exit: 1,
    stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?',
    rule: 'docker-daemon',
    says: /Docker/,
  },
  {
    name: 'docker pull',
    exit: 1,
    stderr:
      "Error response from daemon: pull access denied for acme/app, repository does not exist or may require 'docker login'",
    rule: 'docker-pull-denied',
    says: /image/,
  },
  {
    name: 'kubectl rbac',
    exit: 1,
    stderr: 'Error from server (Forbidden): deployments.apps is forbidden: Forbidden: User "ci" cannot patch resource',
    rule: 'kubectl',
    says: /cluster/,
  },
  {
    name: 'psql auth',
    exit: 2,
    stderr:
      'psql: error: connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  password authentication failed for user "app"',
    rule: 'database-auth',
    says: /app/,
  },
  {
    name: 'make',
    exit: 2,
    stderr: "make: *** No rule to make target 'deploy-prod'.  Stop.",
    rule: 'make-no-rule',
    says: /deploy-prod/,
  },
];

const input = (f: Fixture, secretValues?: string[]): AnalysisInput => ({
  exitCode: f.exit,
  stdoutTail: f.stdout ?? '',
  stderrTail: f.stderr ?? '',
  errorMessage: f.error ?? null,
  interpreter: f.interpreter ?? 'sh',
  actionName: 'deploy-app',
  ...(secretValues === undefined ? {} : { secretValues }),
});

describe('analyzeFailure on realistic output', () => {
  it('has at least 40 fixtures and 40 rules, each rule with a unique id, steps and a confidence in (0, 1]', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    expect(rules.length).toBeGreaterThanOrEqual(40);
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
    for (const rule of rules) {
      expect(rule.remediation.length, rule.id).toBeGreaterThan(0);
      expect(rule.confidence, rule.id).toBeGreaterThan(0);
      expect(rule.confidence, rule.id).toBeLessThanOrEqual(1);
    }
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
    // Act
    const analysis = analyzeFailure(input(fixture), NOW);
    // Assess
    expect(analysis.rule_id).toBe(fixture.rule);
    expect(`${analysis.summary} ${analysis.likely_cause}`).toMatch(fixture.says);
    expect(analysis.confidence).toBeGreaterThan(0.3);
    expect(analysis.remediation.length).toBeGreaterThan(0);
    expect(analysis.remediation.every((step) => step.length > 10 && !/\{\w+\}/.test(step))).toBe(true);
    expect(analysis.analyzed_at).toBe('2026-11-24T10:00:00.000+00:00');
    expect(analysis.model_version).toMatch(/^rules-\d{4}\.\d+\.\d+$/);
  });
});

describe('analyzeFailure beyond the rules', () => {
  it('answers a low-confidence analysis quoting the most telling line when nothing matches', () => {
    // Act
    const analysis = analyzeFailure(
      input({
        name: '',
        exit: 3,
        stderr: 'starting\nrelease check: version mismatch detected\ncleaning up',
        rule: '',
        says: /x/,
      }),
      NOW,
    );
    const silent = analyzeFailure(input({ name: '', exit: 1, rule: '', says: /x/ }), NOW);
    // Assess
    expect(analysis.rule_id).toBe('generic');
    expect(analysis.confidence).toBeLessThanOrEqual(0.3);
    expect(analysis.summary).toBe('The command failed with exit code 3: release check: version mismatch detected');
    expect(silent.summary).toBe('The command failed with exit code 1 and printed nothing.');
  });

  it('never quotes a secret value', () => {
    // Act
    const analysis = analyzeFailure(
      input(
        {
          name: '',
          exit: 22,
          stderr: 'curl: (22) The requested URL returned error: 401 for token hunter2-secret',
          rule: '',
          says: /x/,
        },
        ['hunter2-secret'],
      ),
      NOW,
    );
    // Assess
    expect(JSON.stringify(analysis)).not.toContain('hunter2-secret');
    expect(analysis.summary).toContain('***');
  });

  it('prefers a pattern with its exit code over a pattern alone, and quotes the last matching line', () => {
    // Act
    const analysis = analyzeFailure(
      input({
        name: '',
        exit: 127,
        stderr: 'cat: /tmp/a: No such file or directory\nscript.sh: 4: deploytool: not found',
        rule: '',
        says: /x/,
      }),
      NOW,
    );
    // Assess
    expect(analysis.rule_id).toBe('command-not-found');
    expect(analysis.summary).toContain('deploytool');
  });

  it('finishes on 2000 characters of pathological output (a backtracking pattern would hit the test timeout)', () => {
    // Arrange
    const nasty = `${'a'.repeat(1000)}${' '.repeat(500)}${'('.repeat(250)}${':'.repeat(250)}`;
    // Act
    const analysis = analyzeFailure(
      input({ name: '', exit: 1, stderr: nasty, stdout: nasty, rule: '', says: /x/ }),
      NOW,
    );
    // Assess
    expect(analysis.rule_id).toBe('generic');
  });
});
