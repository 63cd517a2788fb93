// The per-request deadline of the creates (infra/request-budget.ts): calls past the start-by time are refused before
// they are sent (503 with Retry-After), calls in time get the short per-attempt timeout and the backstop's signal,
// a lost write's read-back may still start, and outside a request nothing changes.
import { describe, expect, it, vi } from 'vitest';
import { budgeted, RequestBudgetSpentError, untilBackstop, withRequestBudget } from '../../../infra/request-budget.js';

const LIMITS = { startByMs: 50, endByMs: 200, callAttemptTimeoutMs: 25 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const aClient = () => {
  const sent: unknown[] = [];
  const fast: unknown[] = [];
  const client = budgeted(
    {
      send: vi.fn(async (_command: unknown, options?: unknown) => {
        sent.push(options);
        return 'answer';
      }),
    },
    {
      send: vi.fn(async (_command: unknown, options?: unknown) => {
        fast.push(options);
        return 'answer';
      }),
    },
  );
  return { client, sent, fast };
};

describe('request budget', () => {
  it('sends a call in time through the hard-timeout twin, with the backstop signal', async () => {
    const { client, sent, fast } = aClient();
    expect(await withRequestBudget(() => client.send('command'), LIMITS)).toBe('answer');
    expect(sent).toHaveLength(0);
    expect(fast[0]).toMatchObject({ abortSignal: expect.any(AbortSignal) });
  });

  it('answers a call that timed out as the budget spent (503), a condition failure as it is', async () => {
    const failing = (error: Error) =>
      budgeted(
        { send: async (_c: unknown) => Promise.reject(new Error('x')) },
        { send: async (_c: unknown) => Promise.reject(error) },
      );
    const timeout = Object.assign(new Error('socket'), { name: 'TimeoutError' });
    const wrapped = new Error('database', { cause: timeout });
    const condition = Object.assign(new Error('no'), { name: 'ConditionalCheckFailedException' });
    const outcome = (error: Error) =>
      withRequestBudget(
        () =>
          failing(error)
            .send('c')
            .catch((e: unknown) => e),
        LIMITS,
      );
    expect(await outcome(timeout)).toBeInstanceOf(RequestBudgetSpentError);
    expect(await outcome(wrapped)).toBeInstanceOf(RequestBudgetSpentError);
    expect(await outcome(condition)).toBe(condition);
  });

  it('refuses a call past the start-by time before it is sent: a 503 with Retry-After', async () => {
    const { client, sent, fast } = aClient();
    const refused = await withRequestBudget(async () => {
      await sleep(60);
      return client.send('command').catch((error: unknown) => error);
    }, LIMITS);
    expect(refused).toBeInstanceOf(RequestBudgetSpentError);
    expect((refused as RequestBudgetSpentError).headers).toEqual({ 'retry-after': '1' });
    expect([...sent, ...fast]).toHaveLength(0);
  });

  it('lets the read-back of a lost write start until the backstop, and aborts what is in flight at it', async () => {
    const { client } = aClient();
    const [late, signal] = await withRequestBudget(async () => {
      await sleep(60);
      const answer = await untilBackstop(() => client.send('read back'));
      let seen: AbortSignal | undefined;
      await budgeted({
        send: async (_c: unknown, options?: unknown) => {
          seen = (options as { abortSignal: AbortSignal }).abortSignal;
        },
      })
        .send('x')
        .catch(() => undefined);
      return [answer, seen] as const;
    }, LIMITS);
    expect(late).toBe('answer');
    expect(signal).toBeUndefined(); // refused: never sent
    const inFlight = await withRequestBudget(async () => {
      let captured: AbortSignal | undefined;
      await budgeted({
        send: async (_c: unknown, options?: unknown) => {
          captured = (options as { abortSignal: AbortSignal }).abortSignal;
        },
      }).send('x');
      await sleep(220);
      return captured!;
    }, LIMITS);
    expect(inFlight.aborted).toBe(true);
  });

  it('changes nothing outside a request', async () => {
    const { client, sent } = aClient();
    await client.send('command');
    expect(sent).toEqual([undefined]);
  });
});
