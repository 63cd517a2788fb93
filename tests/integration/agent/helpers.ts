// Shared by the agent's integration tests: temporary directories, waiting for a condition, and process checks.
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type AgentOptions, type RunningAgent } from '../../../agent/agent.js';

export const tempDir = (prefix = 'agent-'): Promise<string> => mkdtemp(join(tmpdir(), prefix));

/**
 * Removes a test's folder. Retries a folder that filled again while it was emptied (ENOTEMPTY: a stopped agent's last
 * record write, a temporary file and its rename, can land during the removal on a loaded machine).
 */
export const removeDir = (dir: string): Promise<void> =>
  rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });

/** Waits until `condition` holds; fails with `what` after `timeoutMs` (wide: the machine may be loaded). */
export const until = async (
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

/** True while a process with this pid exists (a zombie no one has reaped yet counts as gone). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // This machine's init reaps orphans slowly: a dead child waits as a zombie for a while.
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  return !/^\S+ \(.*\) [ZX] /s.test(stat);
};

/** The pid a script wrote to a file, once it is there. */
export const pidFrom = async (file: string): Promise<number> => {
  let text = '';
  await until(`a pid in ${file}`, async () => {
    text = await readFile(file, 'utf8').catch(() => '');
    return /^\d+\s*$/.test(text);
  });
  return Number(text.trim());
};

export interface TestAgent {
  readonly agent: RunningAgent;
  readonly lines: string[];
}

/** An agent with short intervals so the tests are quick; `lines` collects its log. */
export const startTestAgent = async (
  options: Partial<AgentOptions> & Pick<AgentOptions, 'server' | 'stateDir'>,
): Promise<TestAgent> => {
  const lines: string[] = [];
  const agent = await startAgent({
    name: 'test-agent',
    enrollToken: 'det_test-enrollment',
    tags: [{ key: 'env', value: 'test' }],
    heartbeatSeconds: 0.5,
    pollWaitSeconds: 1,
    killGraceSeconds: 1,
    batchIntervalMs: 50,
    connectTimeoutSeconds: 5,
    log: (line) => lines.push(line),
    ...options,
  });
  return { agent, lines };
};
