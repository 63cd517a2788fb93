import { describe, expect, it } from 'vitest';
import { commandEnv, REFUSED_EXIT_CODE, refusedVariable } from '../../../agent/environment.js';
import type { AgentCommand } from '../../../protocol/messages.js';

const command: AgentCommand = {
  id: 'cmd-1',
  deployment_id: 'dep-1',
  step_id: 'step-1',
  attempt: 2,
  action: { id: 'act-1', slug: 'hello', version: '1.2.0' },
  script: 'echo',
  interpreter: 'sh',
  variables: { GREETING: 'hi', HOME: '/overridden' },
  secret_variables: [],
  timeout_seconds: null,
  created_at: '2026-11-22T10:00:00.000Z',
};

describe('commandEnv', () => {
  it("is the agent's environment plus the command's variables and ids", () => {
    // Prepare
    const base = { HOME: '/home/agent', LANG: 'C.UTF-8', PATH: '/usr/bin:/bin' };
    // Act
    const env = commandEnv(base, command);
    // Assess
    expect(env).toEqual({
      HOME: '/overridden',
      LANG: 'C.UTF-8',
      PATH: '/usr/bin:/bin',
      GREETING: 'hi',
      DEPLOYER_DEPLOYMENT_ID: 'dep-1',
      DEPLOYER_STEP_ID: 'step-1',
      DEPLOYER_COMMAND_ID: 'cmd-1',
      DEPLOYER_ACTION_SLUG: 'hello',
      DEPLOYER_ACTION_VERSION: '1.2.0',
    });
  });

  it("leaves out the agent's own variables and what npm run added", () => {
    // Prepare
    const base = {
      PATH: '/repo/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin',
      npm_lifecycle_event: 'agent',
      npm_config_cache: '/root/.npm',
      NODE: '/usr/bin/node',
      DEPLOYER_AGENT_ENROLL_TOKEN: 'det_secret',
      KEEP: 'yes',
    };
    // Act
    const env = commandEnv(base, { ...command, variables: {} });
    // Assess
    expect(env['PATH']).toBe('/usr/bin');
    expect(Object.keys(env).filter((k) => !k.startsWith('DEPLOYER_') || k.startsWith('DEPLOYER_AGENT'))).toEqual([
      'PATH',
      'KEEP',
    ]);
  });

  it('skips variables that cannot be environment variables, naming them', () => {
    // Prepare
    const warnings: string[] = [];
    // Act
    const env = commandEnv({}, { ...command, variables: { 'A=B': 'x', OK: 'fine', NUL: 'a\0b' } }, (m) =>
      warnings.push(m),
    );
    // Assess
    expect(env['OK']).toBe('fine');
    expect(env['NUL']).toBeUndefined();
    expect(Object.keys(env)).not.toContain('A=B');
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).not.toContain('a\0b');
  });
});

describe('refusedVariable', () => {
  it('names the first refused variable with the error the agent reports', () => {
    expect(refusedVariable({ PORT: '80', LD_PRELOAD: '/tmp/x.so' })).toEqual({
      name: 'LD_PRELOAD',
      message: "Refused to run: variable LD_PRELOAD is not allowed in a command's environment",
    });
    expect(refusedVariable(JSON.parse('{"__proto__": {"x": 1}}'))?.name).toBe('__proto__');
    expect(refusedVariable({ PORT: '80', NODE_ENV: 'production', valueOf: 'v' })).toBeUndefined();
    expect(refusedVariable(undefined)).toBeUndefined();
    expect(refusedVariable(['NODE_OPTIONS'])?.message).toContain('not an object');
    expect(REFUSED_EXIT_CODE).toBe(126);
  });
});
