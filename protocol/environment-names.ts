// Which names a variable may have, as a deployment hands it to a command's environment (issue 10, "Variables
// cannot change how a program starts"). One rule for the shape and one deny list of names that make a loader,
// shell or interpreter run code, read code from elsewhere or change which program runs. Compared
// case-insensitively (npm reads npm_config_*, and a lower-case twin must not slip through).
//
// Both sides apply it: the service refuses such names when an action or a deployment is saved, and the agent checks
// every command's variables again before it spawns anything (old servers, tampered records).

/** Letters, digits and _, not starting with a digit, at most 128 characters. */
export const VARIABLE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Names refused outright, upper case, each with the reason it is dangerous. */
export const DENIED_VARIABLE_NAMES: Readonly<Record<string, string>> = Object.freeze({
  NODE_OPTIONS: 'node reads options (--require, --import) from it',
  NODE_PATH: 'node resolves modules from it',
  NODE_EXTRA_CA_CERTS: 'node trusts the certificates it names',
  NODE_REPL_EXTERNAL_MODULE: 'node loads the module it names instead of the REPL',
  BASH_ENV: 'bash runs the file it names before a script',
  ENV: 'sh runs the file it names at start',
  SHELLOPTS: 'bash takes options (xtrace) from it',
  BASHOPTS: 'bash takes options from it',
  PS0: 'bash expands it (command substitution) before each command',
  PS1: 'the shell expands it (command substitution)',
  PS2: 'the shell expands it (command substitution)',
  PS3: 'the shell expands it (command substitution)',
  PS4: 'bash expands it (command substitution) on every xtrace line',
  PROMPT_COMMAND: 'bash runs it before each prompt',
  IFS: 'changes how the shell splits every word',
  PATH: 'decides which program a name runs',
  HOME: 'shells and tools read start-up files from it',
  SHELL: 'tools start it as the shell',
  CDPATH: 'changes where cd goes',
  GLOBIGNORE: 'changes what globs match',
  ZDOTDIR: 'zsh runs the start-up files of this directory',
  JAVA_TOOL_OPTIONS: 'the JVM takes options (-javaagent) from it',
  _JAVA_OPTIONS: 'the JVM takes options (-javaagent) from it',
  JDK_JAVA_OPTIONS: 'the java launcher takes options from it',
  CLASSPATH: 'the JVM loads classes from it',
  MAVEN_OPTS: 'the JVM of maven takes options (-javaagent) from it',
  GRADLE_OPTS: 'the JVM of gradle takes options (-javaagent) from it',
  BROWSER: 'python and other tools run it as a command',
  EDITOR: 'tools run it as a command',
  VISUAL: 'tools run it as a command',
  PAGER: 'tools run it as a command',
  MANPAGER: 'man runs it as a command',
  GCONV_PATH: 'glibc loads charset converters (shared objects) from it',
  LOCPATH: 'glibc loads locale data from it',
  NLSPATH: 'catalog lookups read files it names',
  GLIBC_TUNABLES: 'the glibc loader parses it (CVE-2023-4911)',
  HOSTALIASES: 'changes name resolution',
  RESOLV_HOST_CONF: 'changes name resolution',
  OPENSSL_CONF: 'openssl loads engines and modules the file names',
  OPENSSL_ENGINES: 'openssl loads engines from it',
  SSH_ASKPASS: 'ssh runs it as a command',
  SUDO_ASKPASS: 'sudo runs it as a command',
  LESSOPEN: 'less runs it as a command',
  LESSCLOSE: 'less runs it as a command',
  PERLLIB: 'perl loads modules from it',
  PHPRC: 'php reads its configuration (auto_prepend_file) from it',
  PHP_INI_SCAN_DIR: 'php reads configuration files from it',
  DOTNET_STARTUP_HOOKS: '.NET runs the assemblies it names at start',
  __PROTO__: 'not a name but an object key that changes prototypes',
});

/** Prefixes refused (upper case), each with the reason. `NODE_` allows NODE_ENV (see ALLOWED_DESPITE_PREFIX). */
export const DENIED_VARIABLE_PREFIXES: Readonly<Record<string, string>> = Object.freeze({
  LD_: 'the dynamic loader preloads and resolves libraries from them',
  DYLD_: 'the macOS loader preloads libraries from them',
  PYTHON: 'python reads start-up code, paths and warnings filters from them',
  PERL5: 'perl reads options (-M) and library paths from them',
  RUBY: 'ruby reads options (-r) and library paths from them',
  GEM_: 'rubygems loads gems from them',
  GIT_: 'git runs commands (GIT_SSH, GIT_EXTERNAL_DIFF, GIT_CONFIG_*) from them',
  BASH_FUNC_: 'bash imports functions from them',
  NPM_CONFIG_: 'npm reads its configuration (script-shell, node-options) from them',
  DEPLOYER_: 'reserved for the agent (DEPLOYER_DEPLOYMENT_ID, ...)',
  NODE_: 'node reads options and paths from them',
  LUA_: 'lua runs LUA_INIT and loads modules from LUA_PATH',
  CORECLR_: '.NET loads profilers from them',
});

/** Names a denied prefix would catch that are harmless and common. */
export const ALLOWED_DESPITE_PREFIX: readonly string[] = Object.freeze(['NODE_ENV']);

/** Why `name` may not be a variable of a command, or undefined when it may. */
export const variableNameProblem = (name: string): string | undefined => {
  if (!VARIABLE_NAME_PATTERN.test(name)) {
    return `Variable name '${name}' is not an environment variable name: letters, digits and _, not starting with a digit, at most 128 characters.`;
  }
  const upper = name.toUpperCase();
  const exact = Object.hasOwn(DENIED_VARIABLE_NAMES, upper) ? DENIED_VARIABLE_NAMES[upper] : undefined;
  if (exact !== undefined) return `Variable ${name} is not allowed in a command's environment: ${exact}.`;
  if (ALLOWED_DESPITE_PREFIX.includes(upper)) return undefined;
  const prefix = Object.keys(DENIED_VARIABLE_PREFIXES).find((p) => upper.startsWith(p));
  if (prefix !== undefined)
    return `Variable ${name} is not allowed in a command's environment: names starting with ${prefix} are refused (${DENIED_VARIABLE_PREFIXES[prefix]}).`;
  return undefined;
};

export const isAllowedVariableName = (name: string): boolean => variableNameProblem(name) === undefined;
