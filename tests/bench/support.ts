// What the benchmarks share: a signed-in caller of a stack that throws on any answer that is not a success.
import { readFile } from 'node:fs/promises';
import { logger } from '../../functions/shared/logger.js';
import type { Stack } from '../../local/stack.js';
import { apiClient } from '../support/http.js';

/** A GET that answers 5xx is asked again this many times, a second apart, as a client would (reads are idempotent). */
const READ_ATTEMPTS = 3;

/**
 * Calls `/api/v1<path>` as `admin`; answers the JSON of a 2xx, throws on anything else. A GET answered 5xx (the
 * local stack just after a 1,000-agent round once answered a read 500 DATABASE_CONNECTION_ERROR: its connection to
 * DynamoDB Local timed out) is asked again before it counts as a failure; the retry is logged.
 */
export const signedIn = async (stack: Pick<Stack, 'baseUrl'>, admin: { email: string; password: string }) => {
  logger.setLogLevel('WARN'); // the in-process handlers' access lines
  const baseUrl = stack.baseUrl;
  const api = apiClient(() => baseUrl);
  const token = (await api.login(admin)).token;
  const call = async (method: string, path: string, body?: unknown) => {
    for (let attempt = 1; ; attempt += 1) {
      const reply = await api.call(method, `/api/v1${path}`, { token, body });
      if (reply.status < 300) return reply.json;
      const failure = `${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.json)}`;
      if (method !== 'GET' || reply.status < 500 || attempt >= READ_ATTEMPTS) throw new Error(failure);
      console.log(`   (retrying in 1 s: ${failure})`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  return { baseUrl, token, call };
};

/** Runs a benchmark's main and exits: 0 when it finished, 1 (with the error) when it threw. */
export const runBench = async (main: () => Promise<void>): Promise<never> => {
  try {
    await main();
    process.exit(0);
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
};

/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux; NaN elsewhere or once it is gone):
 * `own` its own, `children` those of its children it has waited for (an agent host: the shells of its commands).
 */
export const cpuSeconds = async (pid: number | 'self'): Promise<{ own: number; children: number }> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = (i: number) => (Number(fields[i]) + Number(fields[i + 1])) / 100;
  return { own: ticks(11), children: ticks(13) };
};
