// The agent's process runner against real processes: interpreters, exit codes, timeouts and process groups.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startProcess, type RunSpec } from '../../../agent/runner.js';
import { alive, pidFrom, removeDir, tempDir, until } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('agent-runner-');
});
afterEach(async () => {
  await removeDir(dir);
});

const run = async (overrides: Partial<RunSpec> & Pick<RunSpec, 'script'>) => {
  const output: { stream: string; text: string }[] = [];
  const started = Date.now();
  const process = await startProcess({
    interpreter: 'sh',
    cwd: join(dir, 'cmd'),
    env: { PATH: globalThis.process.env['PATH'] ?? '/usr/bin:/bin' },
    timeoutSeconds: null,
    killGraceMs: 1000,
    onOutput: (stream, data) => output.push({ stream, text: data.toString('utf8') }),
    ...overrides,
  });
  const result = await process.done;
  return {
    result,
    output,
    text: (stream: string) =>
      output
        .filter((o) => o.stream === stream)
        .map((o) => o.text)
        .join(''),
    ms: Date.now() - started,
    pid: process.pid,
  };
};

describe('startProcess', () => {
  it('runs the script from a file in its own directory and reports its exit code', async () => {
    // Act
    const { result, text } = await run({
      script: 'echo "out $(basename "$PWD") $0"; echo err >&2; exit 3',
      env: { PATH: process.env['PATH'] ?? '', GREETING: 'hi' },
    });
    // Assess
    expect(result).toEqual({ exitCode: 3 });
    expect(text('stdout')).toBe('out cmd script.sh\n');
    expect(text('stderr')).toBe('err\n');
    expect(await readFile(join(dir, 'cmd', 'script.sh'), 'utf8')).toContain('exit 3');
  });

  it.each([
    ['bash', 'echo "$BASH_VERSION" | grep -q . && echo bash-ok', 'bash-ok\n'],
    ['node', 'const fs = require("node:fs"); console.log("cjs", typeof fs.readFileSync)', 'cjs function\n'],
    ['node', 'import { readFileSync } from "node:fs"; console.log("esm", typeof readFileSync)', 'esm function\n'],
    ['python3', 'import os\nprint("py", os.path.basename(os.getcwd()))', 'py cmd\n'],
  ])('runs %s scripts', async (interpreter, script, expected) => {
    // Act
    const { result, text } = await run({ interpreter, script });
    // Assess
    expect(result.exitCode).toBe(0);
    expect(text('stdout')).toBe(expected);
  });

  it('answers 127 with a message when the interpreter is not on this host', async () => {
    // Prepare
    const empty = join(dir, 'empty-path');
    await mkdir(empty);
    // Act
    const { result } = await run({ script: 'echo never', env: { PATH: empty } });
    // Assess
    expect(result).toEqual({ exitCode: 127, errorMessage: "The interpreter 'sh' was not found on this host" });
  });

  it('reports death by a signal as 128 + its number', async () => {
    // Act
    const { result } = await run({ script: 'kill -9 $$' });
    // Assess
    expect(result.exitCode).toBe(137);
  });

  it('kills the whole process group on timeout, children included, and answers 124', async () => {
    // Prepare
    const pidFile = join(dir, 'child.pid');
    // Act
    const running = run({ script: `sleep 30 & echo $! > ${pidFile}; sleep 30`, timeoutSeconds: 1 });
    const child = await pidFrom(pidFile);
    const { result, ms, pid } = await running;
    // Assess
    expect(result).toEqual({ exitCode: 124, errorMessage: 'Timed out after 1 s; the process group was killed' });
    expect(ms).toBeLessThan(8000);
    await until('the background child to be gone', () => !alive(child), 3000);
    expect(alive(pid!)).toBe(false);
  });

  it('sends KILL after the grace period to processes that ignore TERM', async () => {
    // Prepare
    const pidFile = join(dir, 'shell.pid');
    // Act
    const running = run({
      script: `trap '' TERM; echo $$ > ${pidFile}; while true; do sleep 0.2; done`,
      timeoutSeconds: 1,
      killGraceMs: 1500,
    });
    const shell = await pidFrom(pidFile);
    const { result, ms } = await running;
    // Assess
    expect(result.exitCode).toBe(124);
    expect(ms).toBeGreaterThanOrEqual(2400);
    expect(alive(shell)).toBe(false);
  });

  it('kills what a finished script left running, keeping its exit code', async () => {
    // Prepare
    const pidFile = join(dir, 'leftover.pid');
    // Act
    const { result, ms } = await run({ script: `sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}; echo done` });
    const leftover = Number((await readFile(pidFile, 'utf8')).trim());
    // Assess
    expect(result).toEqual({ exitCode: 0, leftovers: true });
    expect(ms).toBeLessThan(8000);
    await until('the leftover to be gone', () => !alive(leftover), 3000);
  });

  it('stops on request with the reason given', async () => {
    // Prepare
    const process = await startProcess({
      interpreter: 'sh',
      script: 'sleep 30',
      cwd: join(dir, 'cmd'),
      env: { PATH: globalThis.process.env['PATH'] ?? '' },
      timeoutSeconds: null,
      killGraceMs: 1000,
      onOutput: () => undefined,
    });
    // Act
    process.stop({ exitCode: 130, message: 'Cancelled by the server' });
    const result = await process.done;
    // Assess
    expect(result).toEqual({ exitCode: 130, errorMessage: 'Cancelled by the server' });
  });
});
