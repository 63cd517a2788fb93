// Every example of README.md, run as written (issue 38): the ```sh blocks in order, and the `run: |` shell of each
// GitHub Actions step, against a stack with its two local agents as `npm start` runs it. The blocks are read from
// README.md itself, so they cannot drift from the code. As a reader's terminal would, the blocks share one shell
// session: variables, functions and the working directory carry over from one block to the next (each block runs in
// a fresh bash that loads what the blocks before it left). Each block must exit 0 under `set -eo pipefail`, and a
// curl answering an HTTP error fails it unless a comment of its paragraph names that status (`# 409 CONFLICT ...`).
//
// What the test changes in the text, all of it listed here:
// - the origin: http://localhost:3000 becomes the stack's (started on a free port);
// - HUMAN below: what a person supplies (the authenticator app's codes, the password typed at a prompt), keyed by
//   the exact README text, so a change to that text fails the test instead of drifting;
// - ACTIONS_CONTEXT below: the `${{ ... }}` expressions and GITHUB_* variables a GitHub runner supplies.
// Blocks marked `<!-- readme-test: skip: reason -->` are not run (the test prints them with their reason); blocks
// marked `<!-- readme-test: stop after N s, expecting "..." -->` run until they printed what is expected (or N s),
// are stopped with SIGTERM, and must have printed it; `<!-- readme-test: expecting "..." -->`: a block that ends by
// itself must have printed it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../local/service-definition.js';
import { apiClient } from '../support/http.js';
import { announcedErrors, readmeBlocks, type ActionsStep, type ReadmeBlock } from '../support/readme-blocks.js';
import { useStackWithAgents } from '../support/stack-with-agents.js';

const e2e = useStackWithAgents('readme');

/** The origin every README example names; the stack's own replaces it. */
const README_ORIGIN = 'http://localhost:3000';

/** What a person supplies, by the exact README text it replaces (each must occur exactly once in the blocks). */
const HUMAN: readonly { readonly readme: string; readonly test: string; readonly why: string }[] = [
  {
    readme: 'curl -s -X POST $B/auth/2fa/setup -H "authorization: Bearer $TOKEN"',
    test: 'README_TOTP_SECRET=$(curl -s -X POST $B/auth/2fa/setup -H "authorization: Bearer $TOKEN" | json secret)',
    why: 'a person adds the secret to an authenticator app; the test keeps it to compute the codes',
  },
  {
    readme: `-d '{"code":"123456"}'`,
    test: `-d "{\\"code\\":\\"$(readme_totp)\\"}"`,
    why: "the authenticator app's code",
  },
  {
    readme: `-d '{"code":"234567"}'`,
    test: `-d "{\\"code\\":\\"$(readme_totp)\\"}"`,
    why: "the authenticator app's code",
  },
  { readme: '\\"654321\\"', test: '\\"$(readme_totp)\\"', why: "the authenticator app's code" },
  {
    readme: 'CODE=paste-the-code-here',
    test: 'CODE=$(node "$README_DIR/browser.mjs" "$AUTHORIZE" admin@example.com admin-password "$(readme_totp)")',
    why: "the browser: sign in, the 2FA code, Allow (the page's forms posted as a browser without JavaScript does)",
  },
  {
    readme: 'npm run cli -- login ',
    test: `printf '%s\\n' admin@example.com admin-password "$(readme_totp)" | npm run cli -- login `,
    why: 'the email, the password and the 2FA code typed at the prompts',
  },
];

/** A GitHub runner's `${{ ... }}` values, as shell expressions of the session (the blocks before made them). */
const ACTIONS_CONTEXT: Readonly<Record<string, string>> = {
  'vars.DEPLOYER_URL': '$README_ORIGIN',
  'secrets.DEPLOYER_API_KEY': '$KEY',
  'runner.temp': '$README_RUNNER_TEMP',
  'secrets.DEPLOYER_TRIGGER_SECRET': '$TRIGGER_SECRET',
  'vars.DEPLOYER_HOOK_URL': '$HOOK',
};
const GITHUB_ENV = { GITHUB_REF: 'refs/heads/main', GITHUB_RUN_ID: '7011', GITHUB_RUN_ATTEMPT: '1' };

// The session's plumbing: a curl that fails on an HTTP error the README does not announce, and the authenticator.
const PRELUDE = String.raw`
curl() {
  local headers status rc line=${'$'}{BASH_LINENO[0]}
  headers=$(mktemp)
  command curl -D "$headers" "$@" && rc=0 || rc=$?
  status=$(grep -a '^HTTP/' "$headers" | tail -n 1 | cut -d ' ' -f 2)
  rm -f "$headers"
  printf '%s line %s: %s\n' "${'$'}{README_BLOCK:-?}" "$line" "${'$'}{status:-no answer}" >> "$README_DIR/calls.log"
  [ "$rc" -eq 0 ] || return "$rc"
  if [ "${'$'}{status:-0}" -ge 400 ]; then
    case " ${'$'}{README_ALLOW[$line]:-} " in *" $status "*) return 0 ;; esac
    printf 'readme-test: HTTP %s at line %s of the block, a status its paragraph does not announce\n' "$status" "$line" >&2
    return 22
  fi
}
readme_totp() { node "$README_DIR/totp.mjs" "$README_TOTP_SECRET" "$README_DIR/totp-step"; }
readme_save() {
  { declare -p $(compgen -v | grep -v -x -F -f "$README_DIR/baseline" | grep -v -x README_ALLOW) 2>/dev/null \
      | grep -v '^declare -[a-zA-Z]*r'
    declare -f
    printf 'cd %q\n' "$PWD"; } > "$README_DIR/state.sh"
}
`;

// RFC 6238 codes for the secret, each of a later time step than the last one given (the service takes no code twice),
// within the service's tolerance of one step either side of now; waits for the next step when all are used.
const TOTP = String.raw`
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const [secret, stateFile] = process.argv.slice(2);
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
let bits = '';
for (const c of secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
const last = existsSync(stateFile) ? Number(readFileSync(stateFile, 'utf8')) : -Infinity;
for (;;) {
  const seconds = Date.now() / 1000;
  const now = Math.floor(seconds / 30);
  const into = seconds - now * 30;
  const candidates = [...(into < 20 ? [now - 1] : []), now, now + 1].filter((s) => s > last);
  if (candidates.length > 0) {
    const step = candidates[0];
    const counter = Buffer.alloc(8);
    counter.writeBigUInt64BE(BigInt(step));
    const mac = createHmac('sha1', key).update(counter).digest();
    const offset = mac[mac.length - 1] & 15;
    const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
    writeFileSync(stateFile, String(step));
    process.stdout.write(String(code).padStart(6, '0'));
    break;
  }
  await new Promise((r) => setTimeout(r, 1000));
}
`;

// The browser of the authorization code flow: opens the address, posts the sign-in form (email, password), the 2FA
// form when asked, and Allow, keeping the page's CSRF cookie as a browser does; prints the code= of the redirect.
const BROWSER = String.raw`
const [address, email, password, code] = process.argv.slice(2);
let cookie = '';
const unescape = (t) => t.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]);
const hidden = (html) =>
  Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [unescape(m[1]), unescape(m[2])]));
const read = async (response) => {
  for (const set of response.headers.getSetCookie()) cookie = /^deployer_oauth_csrf=([^;]*)/.exec(set)?.[1] ?? cookie;
  return { location: response.headers.get('location'), html: await response.text() };
};
const post = async (fields) =>
  read(await fetch(new URL('/oauth/consent', address), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'deployer_oauth_csrf=' + cookie },
    body: new URLSearchParams(fields),
  }));
let page = await read(await fetch(address, { redirect: 'manual' }));
page = await post({ ...hidden(page.html), email, password });
if (page.html.includes('name="code"')) page = await post({ ...hidden(page.html), code });
page = await post({ ...hidden(page.html), decision: 'allow' });
const landed = new URL(page.location ?? 'none:', address).searchParams.get('code');
if (landed === null) throw new Error('the page did not redirect with a code: ' + (page.location ?? page.html.slice(0, 500)));
process.stdout.write(landed);
`;

let dir: string;
let home: string;
let baseEnv: Record<string, string>;
const cleanups: (() => Promise<void>)[] = [];

/** Files the examples write into the checkout (they run there, as a reader's terminal does): put back afterwards. */
const KEPT_ASIDE = ['cookies.txt', join('.local', 'agents', 'web-2')];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'deployer-readme-'));
  home = join(dir, 'home');
  await mkdir(home);
  await mkdir(join(dir, 'runner-temp'));
  await writeFile(join(dir, 'prelude.sh'), PRELUDE);
  await writeFile(join(dir, 'totp.mjs'), TOTP);
  await writeFile(join(dir, 'browser.mjs'), BROWSER);
  for (const path of KEPT_ASIDE) {
    const original = join(ROOT, path);
    const aside = join(dir, 'aside', path);
    const existed = existsSync(original);
    if (existed) {
      await mkdir(dirname(aside), { recursive: true });
      await rename(original, aside);
    }
    cleanups.push(async () => {
      await rm(original, { recursive: true, force: true });
      if (existed) await rename(aside, original);
    });
  }
  // A terminal's environment: node 22 first on the PATH (the README's `node`, and the installed CLI's shebang)
  baseEnv = {
    PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
    HOME: home,
    LANG: 'C.UTF-8',
    README_DIR: dir,
  };
  // The variables of a fresh shell: what the session does not carry from block to block
  await run('compgen -v > "$README_DIR/baseline"', { env: baseEnv });
});
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface Ran {
  readonly code: number | null;
  readonly output: string;
  readonly stopped: boolean;
}

/** bash with `script` in its own process group; stopped with SIGTERM after `stop` (or once `expecting` all appeared). */
const run = (
  script: string,
  options: {
    env: Record<string, string>;
    timeoutMs?: number;
    stop?: { afterMs: number; expecting: readonly string[] };
  },
): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-c', script], {
      cwd: ROOT,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stopped = false;
    const stop = () => {
      if (child.exitCode !== null || stopped) return;
      stopped = true;
      process.kill(-child.pid!, 'SIGTERM');
      setTimeout(() => child.exitCode === null && process.kill(-child.pid!, 'SIGKILL'), 40_000).unref();
    };
    const check = () => {
      if (options.stop !== undefined && options.stop.expecting.every((e) => output.includes(e))) stop();
    };
    child.stdout.on('data', (c: Buffer) => ((output += c.toString()), check()));
    child.stderr.on('data', (c: Buffer) => ((output += c.toString()), check()));
    const timer = setTimeout(
      () => {
        if (options.stop === undefined) output += '\nreadme-test: the block took too long';
        stop();
      },
      options.stop?.afterMs ?? options.timeoutMs ?? 120_000,
    );
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, stopped });
    });
  });

/** The README's text for the test: the stack's origin, and what a person supplies. */
const substitute = (text: string, origin: string): string => {
  let out = text.replaceAll(README_ORIGIN, origin);
  for (const h of HUMAN) out = out.replace(h.readme, h.test);
  return out;
};

const sessionScript = (block: number, text: string) => {
  const allowed = [...announcedErrors(text)]
    .filter(([, statuses]) => statuses.length > 0)
    .map(([line, statuses]) => `[${line}]="${statuses.join(' ')}"`)
    .join(' ');
  return [
    'source "$README_DIR/prelude.sh"',
    '[ ! -f "$README_DIR/state.sh" ] || source "$README_DIR/state.sh"',
    `README_BLOCK=${block}`,
    `declare -A README_ALLOW=(${allowed})`,
    'set -eo pipefail',
    `source "$README_DIR/block-${block}.sh"`,
    'set +eo pipefail',
    'readme_save',
  ].join('\n');
};

/** A variable of the session (what the blocks so far left in the shell). */
const session = async (expression: string): Promise<string> => {
  const ran = await run(`source "$README_DIR/state.sh"; printf %s "${expression}"`, { env: baseEnv });
  return ran.output;
};

/** The step as a GitHub runner runs it: `bash -e` with the step's env and GITHUB_*, none of the session's variables. */
const runStep = async (step: ActionsStep) => {
  const env: Record<string, string> = { ...baseEnv, ...GITHUB_ENV };
  for (const [name, value] of Object.entries(step.env)) {
    let resolved = value;
    for (const m of value.matchAll(/\$\{\{\s*(.*?)\s*\}\}/g)) {
      const expression = ACTIONS_CONTEXT[m[1]!];
      if (expression === undefined) throw new Error(`README.md line ${step.line}: no value for \${{ ${m[1]} }}`);
      resolved = resolved.replace(m[0], await session(expression));
    }
    env[name] = resolved;
  }
  delete env['README_DIR'];
  return run(`set -e\n${step.run}`, { env });
};

describe('README.md', () => {
  it('runs every example as written, in order, in one shell session', async () => {
    const started = Date.now();
    const origin = e2e.stack.baseUrl.replace(/\/$/, '');
    baseEnv['README_ORIGIN'] = origin;
    baseEnv['README_RUNNER_TEMP'] = join(dir, 'runner-temp');
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const blocks: ReadmeBlock[] = readmeBlocks(readme);

    // Every substitution names text the README has, exactly once
    const shellText = blocks.map((b) => (b.kind === 'sh' ? b.text : b.run)).join('\n');
    for (const h of HUMAN) expect(shellText.split(h.readme).length - 1, `README text "${h.readme}"`).toBe(1);

    const stepAnswers: { step: ActionsStep; output: string }[] = [];
    const skipped: string[] = [];
    let n = 0;
    for (const block of blocks) {
      n += 1;
      const where = `README.md line ${block.line} (${block.section})`;
      if (block.marker.kind === 'skip') {
        skipped.push(`${where}: ${block.marker.reason}`);
        continue;
      }
      const blockStarted = Date.now();
      let ran: Ran;
      if (block.kind === 'actions') {
        ran = await runStep(block);
        stepAnswers.push({ step: block, output: ran.output });
      } else {
        await writeFile(join(dir, `block-${n}.sh`), substitute(block.text, origin));
        const marker = block.marker;
        ran = await run(sessionScript(n, block.text), {
          env: baseEnv,
          ...(marker.kind === 'stop'
            ? { stop: { afterMs: marker.afterSeconds * 1000, expecting: marker.expecting } }
            : {}),
        });
        for (const e of marker.expecting) expect(ran.output, `${where} printed "${e}"`).toContain(e);
        if (marker.kind === 'stop') {
          expect(ran.stopped || ran.code === 0, `${where} exited ${ran.code}:\n${ran.output}`).toBe(true);
        }
      }
      console.log(`${where}: ${ran.stopped ? 'stopped' : `exit ${ran.code}`} in ${Date.now() - blockStarted} ms`);
      if (!ran.stopped) expect(ran.code, `${where} exited ${ran.code}:\n${ran.output}`).toBe(0);
    }
    console.log(`Not run (each with its reason):\n  ${skipped.join('\n  ')}`);

    // What the README promises, read back over the API with the session's token
    const token = await session('$TOKEN');
    const api = apiClient(() => origin);
    const get = async (path: string) => (await api.call('GET', `/api/v1${path}`, { token })).json;
    expect((await get(`/deployments/${await session('$DEPLOYMENT')}`)).state).toBe('success');
    expect((await get(`/deployments/${await session('$RUNNING')}`)).state).toBe('cancelled');
    const analysis = await get(`/deployments/${await session('$FAILED')}/analysis`);
    expect(analysis[0]).toMatchObject({
      status: 'failed',
      exit_code: 127,
      analysis: { confidence: expect.any(Number) },
    });
    // The two GitHub Actions steps: the CLI's deploy succeeded; the trigger started (201) or queued (202) a deployment
    const [cliStep, triggerStep] = stepAnswers;
    expect(cliStep?.output).toMatch(/Deployment \S+ success/);
    const triggered = JSON.parse(triggerStep?.output ?? '{}');
    expect(triggered).not.toHaveProperty('triggered', false);
    expect(typeof (triggered.deployment_id ?? triggered.pending_request_id)).toBe('string');
    const calls = (await readFile(join(dir, 'calls.log'), 'utf8')).trim().split('\n').length;
    console.log(
      `README.md: ${blocks.length - skipped.length} examples run (${calls} curl calls), ${skipped.length} not, in ${Date.now() - started} ms`,
    );
  }, 300_000);
});
