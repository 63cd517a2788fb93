import { describe, expect, it } from 'vitest';
import {
  DENIED_VARIABLE_NAMES,
  DENIED_VARIABLE_PREFIXES,
  isAllowedVariableName,
  variableNameProblem,
} from '../../../protocol/environment-names.js';

describe('variable names a command may get', () => {
  it.each([
    'PORT',
    'port',
    '_private',
    'A1',
    'NODE_ENV',
    'node_env',
    'valueOf',
    'constructor',
    'toString',
    'hasOwnProperty',
    'HOMEPAGE',
    'PATH_PREFIX',
    'MY_NODE_OPTIONS',
    'X'.repeat(128),
  ])('allows %s', (name) => {
    expect([isAllowedVariableName(name), variableNameProblem(name)]).toEqual([true, undefined]);
  });

  it.each([
    ['NODE_OPTIONS', 'node reads options'],
    ['node_options', 'node reads options'],
    ['NODE_PATH', 'node resolves modules'],
    ['NODE_TLS_REJECT_UNAUTHORIZED', 'names starting with NODE_'],
    ['LD_PRELOAD', 'names starting with LD_'],
    ['ld_preload', 'names starting with LD_'],
    ['LD_LIBRARY_PATH', 'names starting with LD_'],
    ['DYLD_INSERT_LIBRARIES', 'names starting with DYLD_'],
    ['SHELLOPTS', 'bash takes options'],
    ['PS4', 'xtrace'],
    ['BASH_ENV', 'bash runs the file'],
    ['ENV', 'sh runs the file'],
    ['IFS', 'splits'],
    ['PATH', 'which program'],
    ['Path', 'which program'],
    ['HOME', 'start-up files'],
    ['PYTHONWARNINGS', 'names starting with PYTHON'],
    ['PYTHONSTARTUP', 'names starting with PYTHON'],
    ['BROWSER', 'run it as a command'],
    ['PERL5OPT', 'names starting with PERL5'],
    ['PERLLIB', 'perl loads modules'],
    ['RUBYOPT', 'names starting with RUBY'],
    ['GEM_PATH', 'names starting with GEM_'],
    ['GIT_SSH_COMMAND', 'names starting with GIT_'],
    ['BASH_FUNC_ls%%', 'not an environment variable name'],
    ['BASH_FUNC_ls', 'names starting with BASH_FUNC_'],
    ['npm_config_script_shell', 'names starting with NPM_CONFIG_'],
    ['DEPLOYER_DEPLOYMENT_ID', 'reserved for the agent'],
    ['JAVA_TOOL_OPTIONS', '-javaagent'],
    ['_JAVA_OPTIONS', '-javaagent'],
    ['GLIBC_TUNABLES', 'glibc loader'],
    ['LUA_INIT', 'names starting with LUA_'],
    ['__proto__', 'prototypes'],
    ['1ABC', 'not an environment variable name'],
    ['A-B', 'not an environment variable name'],
    ['', 'not an environment variable name'],
    ['X'.repeat(129), 'at most 128 characters'],
  ])('refuses %s (%s)', (name, reason) => {
    expect(isAllowedVariableName(name)).toBe(false);
    expect(variableNameProblem(name)).toContain(reason);
  });

  it('keeps every entry upper case, so the case-insensitive comparison can find it', () => {
    for (const name of [...Object.keys(DENIED_VARIABLE_NAMES), ...Object.keys(DENIED_VARIABLE_PREFIXES)])
      expect(name).toBe(name.toUpperCase());
  });
});
