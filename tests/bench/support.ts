// What the benchmarks share: a signed-in caller of a stack that throws on any answer that is not a success.
import { logger } from '../../functions/shared/logger.js';
import type { Stack } from '../../local/stack.js';
import { apiClient } from '../support/http.js';

/** Calls `/api/v1<path>` as `admin`; answers the JSON of a 2xx, throws on anything else. */
export const signedIn = async (stack: Pick<Stack, 'baseUrl'>, admin: { email: string; password: string }) => {
  logger.setLogLevel('WARN'); // the in-process handlers' access lines
  const baseUrl = stack.baseUrl;
  const api = apiClient(() => baseUrl);
  const token = (await api.login(admin)).token;
  const call = async (method: string, path: string, body?: unknown) => {
    const reply = await api.call(method, `/api/v1${path}`, { token, body });
    if (reply.status >= 300)
      throw new Error(`${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.json)}`);
    return reply.json;
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
