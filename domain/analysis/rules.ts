// The failure-analysis rule library: each rule is data (what it matches, the cause, the remediation, how sure it
// is). analyze.ts picks the best match; nothing here reaches the network. Templates: {match} (the matched line),
// {1}.. (its capture groups), {exit_code}, {action}, {interpreter}.
import type { Interpreter } from '../targets/types.js';

export const RULE_SET_VERSION = '2026.11.1';

export interface AnalysisRule {
  readonly id: string;
  /** Matches when the exit code is one of these (alone, or with a pattern: then it ranks higher). */
  readonly exitCodes?: readonly number[];
  /** Tried on the stderr tail, then stdout, then the agent's error message; the last matching line is quoted. */
  readonly patterns: readonly RegExp[];
  readonly interpreters?: readonly Interpreter[];
  readonly summary: string;
  readonly likelyCause: string;
  readonly remediation: readonly string[];
  /** 0..1 */
  readonly confidence: number;
}

export const rules: readonly AnalysisRule[] = [
  {
    id: 'command-not-found',
    exitCodes: [127],
    patterns: [/command not found: ([\w./-]+)/, /(?:^|: )([\w./-]+): (?:command )?not found/],
    summary: 'The command `{1}` does not exist on the target.',
    likelyCause: 'The program `{1}` is not installed on the target, or it is not on the PATH the agent runs with.',
    remediation: [
      'Install the package that provides `{1}` on the target (or in its image).',
      'Or call it by its absolute path; check `command -v {1}` on the target as the agent user.',
      'If it is installed for another user, add its directory to the PATH in the script.',
    ],
    confidence: 0.9,
  },
  {
    id: 'interpreter-missing',
    exitCodes: [127],
    patterns: [/interpreter (?:\S+ )?(?:is )?(?:missing|not found|not installed)/i, /spawn (\S+) ENOENT/],
    summary: 'The interpreter of the action ({interpreter}) is not available on the target.',
    likelyCause: 'The target has no `{interpreter}` on the agent’s PATH.',
    remediation: [
      'Install {interpreter} on the target, or choose an interpreter the target has in the action version.',
      'Check `command -v {interpreter}` as the user the agent runs as.',
    ],
    confidence: 0.85,
  },
  {
    id: 'permission-denied',
    exitCodes: [126, 1, 2, 13, 77],
    patterns: [/Permission denied/i, /EACCES/, /Operation not permitted/i, /are you root\?/i],
    summary: 'The command was refused access: {match}',
    likelyCause:
      'The agent’s user may not read, write or execute what the command touches (file modes, ownership, or a missing sudo).',
    remediation: [
      'Check the owner and mode of the path in the message (`ls -l`), and which user the agent runs as (`id`).',
      'Grant that user access (group membership, a narrow sudoers rule) instead of running the agent as root.',
      'For scripts, make sure the file is executable (`chmod +x`) and not on a noexec mount.',
    ],
    confidence: 0.8,
  },
  {
    id: 'no-space-left',
    patterns: [/No space left on device/i, /ENOSPC/, /disk full/i],
    summary: 'The target ran out of disk space.',
    likelyCause: 'A file system on the target is full: {match}',
    remediation: [
      'Find what fills it: `df -h` then `du -xsh /var/* | sort -h` on the target.',
      'Clean old releases, logs (`journalctl --vacuum-size=`), package caches and unused container images.',
      'Grow the volume or move the data, then run the deployment again.',
    ],
    confidence: 0.95,
  },
  {
    id: 'disk-quota',
    patterns: [/Disk quota exceeded/i, /EDQUOT/],
    summary: 'The agent’s user exceeded its disk quota.',
    likelyCause: 'A per-user or per-group quota on the target is used up.',
    remediation: ['Check `quota -s` for the agent user; remove old files or raise the quota.'],
    confidence: 0.9,
  },
  {
    id: 'out-of-memory',
    exitCodes: [137],
    patterns: [
      /Out of memory/i,
      /\bOOM\b/,
      /Killed\s*$/m,
      /Cannot allocate memory/i,
      /JavaScript heap out of memory/i,
      /MemoryError/,
    ],
    summary: 'The command was killed for lack of memory.',
    likelyCause: 'The process used more memory than the target (or its cgroup limit) allows, so the kernel killed it.',
    remediation: [
      'Check `dmesg` / `journalctl -k` on the target for the OOM killer’s line naming the process.',
      'Give the target (or the container) more memory, or lower the command’s use (Node: --max-old-space-size).',
      'Run memory-heavy steps one target at a time (rolling) rather than in parallel.',
    ],
    confidence: 0.85,
  },
  {
    id: 'timeout',
    exitCodes: [124],
    patterns: [/Timed out after (\d+) s/i],
    summary: 'The command ran past its timeout and was stopped.',
    likelyCause: 'The step did not finish within its timeout; something it waits for may be slow or hanging.',
    remediation: [
      'Look at the last lines of output to see what it was waiting for (a network call, a lock, a prompt).',
      'Make the script non-interactive (e.g. `apt-get -y`, `DEBIAN_FRONTEND=noninteractive`).',
      'If the work is legitimately long, raise the action version’s timeout_seconds.',
    ],
    confidence: 0.8,
  },
  {
    id: 'cancelled',
    exitCodes: [130],
    patterns: [/Cancelled/i],
    summary: 'The command was cancelled before it finished.',
    likelyCause: 'A user cancelled the deployment, or the agent shut down while the command ran.',
    remediation: ['Check the deployment’s cancel reason and the agent’s log; run the deployment again if needed.'],
    confidence: 0.7,
  },
  {
    id: 'agent-lost',
    exitCodes: [-1],
    patterns: [/agent restarted/i],
    summary: 'The agent restarted while the command was running; its result is unknown.',
    likelyCause: 'The agent process (or its host) was restarted or killed during the command.',
    remediation: [
      'Check the host for a reboot, an OOM kill of the agent, or a service restart at that time.',
      'Check whether the command’s effect happened before running the deployment again.',
    ],
    confidence: 0.75,
  },
  {
    id: 'killed-by-signal',
    exitCodes: [129, 131, 132, 134, 135, 136, 139, 143],
    patterns: [/Segmentation fault/i, /core dumped/i, /Aborted/],
    summary: 'The command was killed by a signal (exit code {exit_code}).',
    likelyCause:
      'The process died from signal {exit_code} - 128 (SIGSEGV 139, SIGABRT 134, SIGTERM 143, ...): a crash or an outside kill.',
    remediation: [
      'Look at the target’s logs (`journalctl`, `dmesg`) for who sent the signal or why the program crashed.',
      'A crash (SIGSEGV, SIGABRT) usually needs a fixed program version or matching native libraries.',
    ],
    confidence: 0.6,
  },
  {
    id: 'connection-refused',
    patterns: [/Connection refused/i, /ECONNREFUSED/, /curl: \(7\)/, /could not connect to server/i],
    summary: 'A connection was refused: {match}',
    likelyCause: 'Nothing listens on the address and port the command connects to, or a firewall rejects it.',
    remediation: [
      'Check that the service the command calls is running and listening (`ss -ltnp` on its host).',
      'Check the host name and port in the script or its variables.',
      'Check firewalls and security groups between the target and that service.',
    ],
    confidence: 0.85,
  },
  {
    id: 'connection-timeout',
    patterns: [/Connection timed out/i, /ETIMEDOUT/, /curl: \(28\)/, /Operation timed out/i],
    summary: 'A network connection timed out: {match}',
    likelyCause:
      'The remote host did not answer: it is down, unreachable from the target, or a firewall drops packets.',
    remediation: [
      'Test from the target: `curl -v` or `nc -vz host port`.',
      'Check routes, proxies (HTTP_PROXY / NO_PROXY) and security groups on the path.',
    ],
    confidence: 0.8,
  },
  {
    id: 'connection-reset',
    patterns: [/Connection reset by peer/i, /ECONNRESET/, /curl: \(56\)/],
    summary: 'The remote end reset the connection: {match}',
    likelyCause: 'The server closed the connection mid-way (it crashed, restarted, or a proxy cut it).',
    remediation: ['Retry the step; if it repeats, look at the remote service’s and the proxy’s logs.'],
    confidence: 0.7,
  },
  {
    id: 'dns-failure',
    patterns: [
      /Could not resolve host:? ?(\S+)/i,
      /Temporary failure in name resolution/i,
      /ENOTFOUND\s*(\S*)/,
      /Name or service not known/i,
      /getaddrinfo/,
      /curl: \(6\)/,
    ],
    summary: 'A host name could not be resolved: {match}',
    likelyCause: 'DNS on the target cannot resolve the name (a typo, a missing record, or no DNS server reachable).',
    remediation: [
      'Check the name in the script or its variables; resolve it on the target with `getent hosts <name>`.',
      'Check /etc/resolv.conf and that the DNS servers are reachable from the target.',
    ],
    confidence: 0.85,
  },
  {
    id: 'tls-certificate',
    patterns: [
      /certificate verify failed/i,
      /SSL certificate problem/i,
      /unable to get local issuer certificate/i,
      /self[- ]signed certificate/i,
      /CERT_HAS_EXPIRED|certificate has expired/i,
      /x509:/,
      /curl: \(60\)/,
    ],
    summary: 'A TLS certificate was not accepted: {match}',
    likelyCause:
      'The server’s certificate is expired, self-signed, issued for another name, or its CA is not trusted on the target.',
    remediation: [
      'Inspect it: `openssl s_client -connect host:443 -servername host` from the target.',
      'Install the issuing CA in the target’s trust store (update-ca-certificates), or renew the certificate.',
      'Do not turn verification off in the script.',
    ],
    confidence: 0.85,
  },
  {
    id: 'tls-handshake',
    patterns: [/SSL routines/i, /handshake failure/i, /wrong version number/i, /curl: \(35\)/],
    summary: 'The TLS handshake failed: {match}',
    likelyCause: 'The client and server share no protocol version or cipher, or the port does not speak TLS.',
    remediation: [
      'Check that the URL’s scheme and port match the server (https on a TLS port), and the TLS versions allowed.',
    ],
    confidence: 0.7,
  },
  {
    id: 'http-client-error',
    patterns: [
      /curl: \(22\) The requested URL returned error: (4\d\d)/,
      /ERROR (4\d\d):? /,
      /HTTP\/\S+ (4\d\d)/,
      /status code (4\d\d)/i,
    ],
    summary: 'An HTTP request was refused with {1}: {match}',
    likelyCause:
      'The URL is wrong (404), the credentials are missing or wrong (401/403), or the request is malformed (400).',
    remediation: [
      'Check the URL and the artifact version the script downloads (does it exist?).',
      'Check the credentials or token variables the request uses, and that they are still valid.',
    ],
    confidence: 0.8,
  },
  {
    id: 'http-server-error',
    patterns: [
      /curl: \(22\) The requested URL returned error: (5\d\d)/,
      /ERROR (5\d\d):? /,
      /HTTP\/\S+ (5\d\d)/,
      /status code (5\d\d)/i,
    ],
    summary: 'A server answered with an error {1}: {match}',
    likelyCause: 'The remote service failed or is overloaded (5xx); the request itself may be fine.',
    remediation: [
      'Retry later, and check the remote service’s health and logs; add retries with backoff to the script.',
    ],
    confidence: 0.75,
  },
  {
    id: 'apt-missing-package',
    patterns: [
      /E: Unable to locate package (\S+)/,
      /E: Package '([^']+)' has no installation candidate/,
      /E: Couldn't find any package by/,
    ],
    summary: 'apt could not find the package `{1}`.',
    likelyCause:
      'The package name is wrong, or the package lists are stale / the repository that has it is not configured.',
    remediation: [
      'Run `apt-get update` before installing (in the same script).',
      'Check the name with `apt-cache search {1}`; add the repository that provides it if needed.',
    ],
    confidence: 0.95,
  },
  {
    id: 'apt-lock',
    patterns: [
      /Could not get lock (\S+)/,
      /Unable to acquire the dpkg frontend lock/i,
      /is another process using it\?/,
    ],
    summary: 'The package manager is locked by another process: {match}',
    likelyCause: 'Another apt/dpkg run (often unattended-upgrades) holds the lock.',
    remediation: [
      'Wait for the other run to finish (`ps aux | grep -E "apt|dpkg"`), then run the deployment again.',
      'In the script, wait for the lock: `apt-get -o DPkg::Lock::Timeout=300 install ...`.',
    ],
    confidence: 0.9,
  },
  {
    id: 'dpkg-interrupted',
    patterns: [/dpkg was interrupted/i],
    summary: 'A previous package installation was interrupted.',
    likelyCause: 'dpkg’s state is half-configured after an earlier failure or kill.',
    remediation: ['Run `dpkg --configure -a` on the target, then the deployment again.'],
    confidence: 0.9,
  },
  {
    id: 'dnf-missing-package',
    patterns: [/No match for argument:? (\S+)/, /No package (\S+) available/, /Unable to find a match:? (\S+)/],
    summary: 'dnf/yum could not find the package `{1}`.',
    likelyCause: 'The package name is wrong or its repository is not enabled on the target.',
    remediation: ['Check the name with `dnf search {1}`; enable the repository that provides it (e.g. EPEL).'],
    confidence: 0.9,
  },
  {
    id: 'npm-not-found',
    patterns: [/npm ERR! 404/, /npm error 404/, /E404/],
    summary: 'npm could not find a package or version: {match}',
    likelyCause:
      'A package name or version in package.json does not exist in the registry, or the registry needs credentials.',
    remediation: ['Check the name and version in package.json; check .npmrc for the registry and its auth token.'],
    confidence: 0.85,
  },
  {
    id: 'npm-resolve',
    patterns: [/ERESOLVE/, /unable to resolve dependency tree/i, /npm ERR! code ERESOLVE/],
    summary: 'npm could not resolve the dependency tree.',
    likelyCause: 'Peer dependency versions conflict.',
    remediation: [
      'Use `npm ci` with a committed package-lock.json; fix the conflicting peer versions (or --legacy-peer-deps as a stopgap).',
    ],
    confidence: 0.85,
  },
  {
    id: 'pip-missing-package',
    patterns: [
      /No matching distribution found for (\S+)/,
      /Could not find a version that satisfies the requirement (\S+)/,
    ],
    summary: 'pip could not find `{1}`.',
    likelyCause:
      'The package or version does not exist for this Python version and platform, or the index is unreachable.',
    remediation: ['Check the requirement and the Python version (`python3 --version`); check the index URL and proxy.'],
    confidence: 0.9,
  },
  {
    id: 'pip-externally-managed',
    patterns: [/externally-managed-environment/],
    summary: 'pip refused to install into the system Python.',
    likelyCause: 'The distribution marks its Python as externally managed (PEP 668).',
    remediation: [
      'Install into a virtual environment (`python3 -m venv .venv && .venv/bin/pip install ...`) or use the distro package.',
    ],
    confidence: 0.95,
  },
  {
    id: 'systemd-unit-failed',
    patterns: [/Job for (\S+) failed/, /Failed to start (\S+)/, /(\S+\.service): Main process exited/],
    summary: 'The systemd unit {1} failed to start.',
    likelyCause: 'The service exited at start-up (bad configuration, a port in use, missing files).',
    remediation: [
      'Read its log: `journalctl -u {1} -n 50 --no-pager` and `systemctl status {1}`.',
      'Validate the service’s configuration before restarting it (e.g. `nginx -t`).',
    ],
    confidence: 0.85,
  },
  {
    id: 'systemd-unit-missing',
    patterns: [/Unit (\S+) not found/, /Unit (\S+) could not be found/],
    summary: 'The systemd unit {1} does not exist on the target.',
    likelyCause: 'The unit name is wrong or its package is not installed.',
    remediation: ['List units with `systemctl list-unit-files | grep <name>`; install the package or fix the name.'],
    confidence: 0.9,
  },
  {
    id: 'file-not-found',
    exitCodes: [1, 2],
    patterns: [/No such file or directory/, /ENOENT/, /FileNotFoundError/, /cannot access '([^']+)'/],
    summary: 'A file or directory the command needs does not exist: {match}',
    likelyCause: 'A path in the script or its variables is wrong, or an earlier step did not create it.',
    remediation: [
      'Check the path in the message on the target; scripts run in their own working directory, so use absolute paths.',
      'Make sure the step that creates it ran on this target first (sequence order).',
    ],
    confidence: 0.7,
  },
  {
    id: 'read-only-fs',
    patterns: [/Read-only file system/i, /EROFS/],
    summary: 'The command tried to write to a read-only file system.',
    likelyCause: 'The mount is read-only (by design, or remounted read-only after disk errors).',
    remediation: ['Write somewhere writable, or check `mount` and `dmesg` for disk errors that forced read-only.'],
    confidence: 0.9,
  },
  {
    id: 'too-many-open-files',
    patterns: [/Too many open files/i, /EMFILE/],
    summary: 'The process ran out of file descriptors.',
    likelyCause: 'The open-files limit (ulimit -n / LimitNOFILE) is too low for the work, or descriptors leak.',
    remediation: ['Raise the limit for the agent’s service (LimitNOFILE) or in the script (`ulimit -n`).'],
    confidence: 0.85,
  },
  {
    id: 'address-in-use',
    patterns: [/Address already in use/i, /EADDRINUSE/, /bind\(\) to \S+ failed/],
    summary: 'A port the command needs is already taken: {match}',
    likelyCause: 'Another process (often the previous version still running) listens on that port.',
    remediation: ['Find it with `ss -ltnp | grep <port>`; stop the old process first, or change the port.'],
    confidence: 0.9,
  },
  {
    id: 'shell-syntax-error',
    interpreters: ['sh', 'bash'],
    patterns: [/syntax error(?: near unexpected token)?/i, /unexpected end of file/i, /unexpected EOF/i],
    summary: 'The shell script has a syntax error: {match}',
    likelyCause: 'The action version’s script does not parse (a missing quote, fi, done or brace).',
    remediation: ['Check it with `bash -n script.sh` (or `sh -n`) and `shellcheck`; publish a fixed action version.'],
    confidence: 0.9,
  },
  {
    id: 'unbound-variable',
    patterns: [/(\w+): unbound variable/, /parameter not set/],
    summary: 'The script used the variable `{1}`, which is not set.',
    likelyCause: 'The script runs with `set -u` and the deployment did not provide `{1}`.',
    remediation: [
      'Give the variable in the deployment (or a default in the action), or use `${{1}:-default}` in the script.',
    ],
    confidence: 0.9,
  },
  {
    id: 'python-syntax-error',
    interpreters: ['python3'],
    patterns: [/SyntaxError: (.+)/, /IndentationError: (.+)/, /TabError: (.+)/],
    summary: 'The Python script does not parse: {match}',
    likelyCause: 'A syntax error in the action version’s script, or a Python version older than the syntax it uses.',
    remediation: [
      'Run `python3 -m py_compile script.py` against the target’s Python version; publish a fixed version.',
    ],
    confidence: 0.9,
  },
  {
    id: 'python-module-missing',
    patterns: [/ModuleNotFoundError: No module named '([^']+)'/, /ImportError: (.+)/],
    summary: 'Python could not import `{1}`.',
    likelyCause:
      'The module is not installed for the Python the agent runs (or in the virtual environment the script expects).',
    remediation: [
      'Install it (`python3 -m pip install {1}` in a venv, or the distro package), or activate the right venv in the script.',
    ],
    confidence: 0.9,
  },
  {
    id: 'python-exception',
    interpreters: ['python3'],
    patterns: [/Traceback \(most recent call last\)/, /^(\w+(?:Error|Exception)): (.+)$/m],
    summary: 'The Python script raised an exception: {match}',
    likelyCause: 'An uncaught exception in the script (the last line of the traceback names it).',
    remediation: ['Read the traceback’s last frames; handle the error or fix its cause, then publish a new version.'],
    confidence: 0.6,
  },
  {
    id: 'node-syntax-error',
    interpreters: ['node'],
    patterns: [/SyntaxError: (.+)/],
    summary: 'The Node script does not parse: {match}',
    likelyCause: 'A syntax error, or syntax the target’s Node version does not support.',
    remediation: ['Check it with `node --check script.js` on the target’s Node version; publish a fixed version.'],
    confidence: 0.85,
  },
  {
    id: 'node-module-missing',
    patterns: [/Cannot find module '([^']+)'/, /ERR_MODULE_NOT_FOUND/],
    summary: 'Node could not load the module `{1}`.',
    likelyCause: 'The dependency is not installed next to the script (no node_modules), or the path is wrong.',
    remediation: [
      'Install dependencies before running (`npm ci`), or use only Node’s built-in modules in action scripts.',
    ],
    confidence: 0.9,
  },
  {
    id: 'node-exception',
    interpreters: ['node'],
    patterns: [/^(\w*Error): (.+)$/m, /Uncaught/, /UnhandledPromiseRejection/],
    summary: 'The Node script threw: {match}',
    likelyCause: 'An uncaught exception or rejected promise in the script.',
    remediation: ['Read the stack trace above it; catch and handle the error or fix its cause.'],
    confidence: 0.55,
  },
  {
    id: 'tests-failed',
    patterns: [
      /Tests?:\s+(\d+) failed/,
      /(\d+) failed(?:,| in)/,
      /^FAIL\s+\S+/m,
      /--- FAIL: (\S+)/,
      /npm ERR! Test failed/,
    ],
    summary: 'The test run failed: {match}',
    likelyCause: 'One or more tests failed; the deployment stopped at the test step as it should.',
    remediation: ['Read the failing tests’ output above; fix the code or the tests, then deploy the fixed version.'],
    confidence: 0.8,
  },
  {
    id: 'git-auth',
    patterns: [
      /Authentication failed for '([^']+)'/,
      /Permission denied \(publickey\)/,
      /could not read Username/,
      /Host key verification failed/,
      /terminal prompts disabled/,
    ],
    summary: 'git could not authenticate: {match}',
    likelyCause:
      'The target has no valid credentials (deploy key or token) for the repository, or its host key is unknown.',
    remediation: [
      'Give the agent user a deploy key (ssh) or a token (https) with read access; scripts cannot answer prompts.',
      'Add the git host to known_hosts (`ssh-keyscan host >> ~/.ssh/known_hosts`).',
    ],
    confidence: 0.9,
  },
  {
    id: 'git-not-found',
    patterns: [
      /fatal: repository '([^']+)' not found/,
      /fatal: couldn't find remote ref (\S+)/,
      /did not match any file\(s\) known to git/,
    ],
    summary: 'git could not find a repository or ref: {match}',
    likelyCause: 'The repository URL, branch or tag does not exist, or the credentials cannot see it.',
    remediation: ['Check the repository URL and the ref the script checks out; check access for the credentials used.'],
    confidence: 0.85,
  },
  {
    id: 'docker-daemon',
    patterns: [
      /Cannot connect to the Docker daemon/i,
      /docker\.sock: connect: permission denied/i,
      /Is the docker daemon running\?/i,
    ],
    summary: 'Docker is not reachable on the target: {match}',
    likelyCause: 'The Docker daemon is stopped, or the agent’s user is not allowed to use its socket.',
    remediation: [
      'Start it (`systemctl start docker`); add the agent user to the `docker` group or use rootless Docker.',
    ],
    confidence: 0.9,
  },
  {
    id: 'docker-pull-denied',
    patterns: [
      /pull access denied/i,
      /manifest unknown/i,
      /manifest for \S+ not found/i,
      /unauthorized: authentication required/i,
    ],
    summary: 'The container image could not be pulled: {match}',
    likelyCause: 'The image name or tag is wrong, or the registry needs a login the target does not have.',
    remediation: [
      'Check the image and tag; run `docker login <registry>` for the agent user (or use a credential helper).',
    ],
    confidence: 0.85,
  },
  {
    id: 'kubectl',
    patterns: [
      /error: You must be logged in to the server/i,
      /Forbidden: User "([^"]+)" cannot/,
      /The connection to the server \S+ was refused/,
      /current-context is not set/i,
    ],
    summary: 'kubectl could not act on the cluster: {match}',
    likelyCause: 'The kubeconfig is missing or expired, points at the wrong cluster, or the user lacks RBAC rights.',
    remediation: [
      'Check `kubectl config current-context` and `kubectl auth can-i` as the agent user; refresh the credentials.',
    ],
    confidence: 0.8,
  },
  {
    id: 'database-auth',
    patterns: [
      /password authentication failed for user "([^"]+)"/,
      /Access denied for user '([^']+)'/,
      /FATAL:\s+role "([^"]+)" does not exist/,
    ],
    summary: 'The database refused the login of {1}.',
    likelyCause: 'Wrong credentials in the deployment’s variables, or the user does not exist on that server.',
    remediation: [
      'Check the user and password variables (secrets) of the deployment; check the server’s pg_hba.conf or grants.',
    ],
    confidence: 0.9,
  },
  {
    id: 'terraform',
    patterns: [/Error: (?:Error acquiring the state lock|Invalid|Unsupported|Missing required)[^\n]*/, /│ Error: (.+)/],
    summary: 'Terraform failed: {match}',
    likelyCause: 'A configuration error or a locked state, as the message says.',
    remediation: [
      'Run `terraform validate` and `terraform plan` with the same variables; release a stale lock with `terraform force-unlock` only if no run holds it.',
    ],
    confidence: 0.7,
  },
  {
    id: 'make-no-rule',
    patterns: [/No rule to make target '([^']+)'/, /No targets specified and no makefile found/],
    summary: 'make has no rule for `{1}`.',
    likelyCause: 'The target name is wrong, or the script runs in a directory without the Makefile.',
    remediation: [
      'Check the working directory (`cd` to the checkout first) and the target name (`make -qp | grep ...`).',
    ],
    confidence: 0.85,
  },
  {
    id: 'exit-nonzero-generic-shell',
    exitCodes: [1],
    patterns: [/^\+ .+$/m],
    summary: 'The script stopped at a failing command: {match}',
    likelyCause: 'A command of the script (traced with `set -x`) exited with an error; the lines before it say why.',
    remediation: ['Read the output just before the failing command; run that command by hand on the target.'],
    confidence: 0.35,
  },
];
