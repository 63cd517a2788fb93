import { describe, expect, it } from 'vitest';
import * as agent from '../../../agent/environment-names.js';
import * as domain from '../../../domain/shared/environment-names.js';

describe("the agent's copy of the variable-name rule", () => {
  it('is the same pattern, deny list, prefixes and exceptions as the domain module', () => {
    expect(agent.VARIABLE_NAME_PATTERN.source).toBe(domain.VARIABLE_NAME_PATTERN.source);
    expect(agent.VARIABLE_NAME_PATTERN.flags).toBe(domain.VARIABLE_NAME_PATTERN.flags);
    expect(agent.DENIED_VARIABLE_NAMES).toEqual(domain.DENIED_VARIABLE_NAMES);
    expect(agent.DENIED_VARIABLE_PREFIXES).toEqual(domain.DENIED_VARIABLE_PREFIXES);
    expect(agent.ALLOWED_DESPITE_PREFIX).toEqual(domain.ALLOWED_DESPITE_PREFIX);
  });

  it('decides like the domain for every listed name, its lower-case twin and a few ordinary ones', () => {
    const names = [
      ...Object.keys(domain.DENIED_VARIABLE_NAMES),
      ...Object.keys(domain.DENIED_VARIABLE_PREFIXES).map((p) => `${p}X`),
      ...domain.ALLOWED_DESPITE_PREFIX,
      'PORT',
      'valueOf',
      '1BAD',
    ];
    for (const name of [...names, ...names.map((n) => n.toLowerCase())])
      expect([name, agent.variableNameProblem(name)]).toEqual([name, domain.variableNameProblem(name)]);
  });
});

describe('refusedVariable', () => {
  it('names the first refused variable with the error the agent reports', () => {
    expect(agent.refusedVariable({ PORT: '80', LD_PRELOAD: '/tmp/x.so' })).toEqual({
      name: 'LD_PRELOAD',
      message: "Refused to run: variable LD_PRELOAD is not allowed in a command's environment",
    });
    expect(agent.refusedVariable(JSON.parse('{"__proto__": {"x": 1}}'))?.name).toBe('__proto__');
    expect(agent.refusedVariable({ PORT: '80', NODE_ENV: 'production', valueOf: 'v' })).toBeUndefined();
    expect(agent.refusedVariable(undefined)).toBeUndefined();
    expect(agent.refusedVariable(['NODE_OPTIONS'])?.message).toContain('not an object');
    expect(agent.REFUSED_EXIT_CODE).toBe(126);
  });
});
