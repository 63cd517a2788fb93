// A per-request deadline for the creates (issue 34): API Gateway answers 503 itself after 29 s, while the function
// may still commit, so a create's own work must end well before. Inside `withRequestBudget`, every call of the
// budgeted clients (aws-clients.ts: the service's DynamoDB and SQS clients) is
//   - refused once START_BY_MS have passed since the request arrived: ServiceUnavailableError (503, Retry-After),
//     before it is sent. Before the commit that answers a clean 503 with nothing written; after it, the domain's
//     `afterCommit` gives the step up (the sweep redoes it) and the answer stays the 2xx.
//   - sent through a twin client whose attempts time out hard after callAttemptTimeoutMs (the usual clients' 10 s
//     only warns): the SDK's 3 attempts of a call started before startByMs end before endByMs (3 x 2.5 s + backoff,
//     about 8 s); a call that timed out answers 503 too.
//   - aborted at endByMs, a backstop that a call started in time does not reach.
// The one exception: the read-back of a write whose answer was lost (dynamodb/conditional.ts `readBack`) may start
// until endByMs: refusing it would answer 503 for a write that may have committed. Powertools' idempotency client
// (its own, not budgeted) has the same hard 2.5 s attempts (3): its last write ends by about 25 s, the worst case.
// See docs/decisions.md, "Retries and idempotency".
import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceUnavailableError } from '../domain/errors.js';

export const REQUEST_BUDGET = { startByMs: 8_000, endByMs: 17_000, callAttemptTimeoutMs: 2_500 } as const;
export type RequestBudgetLimits = { readonly [K in keyof typeof REQUEST_BUDGET]: number };

interface Budget {
  readonly startBy: number;
  readonly endBy: number;
  readonly callAttemptTimeoutMs: number;
  readonly signal: AbortSignal;
}

const current = new AsyncLocalStorage<Budget>();

/** Runs `work` (one HTTP request) under the budget, counted from now. */
export const withRequestBudget = async <T>(
  work: () => Promise<T>,
  limits: RequestBudgetLimits = REQUEST_BUDGET,
): Promise<T> => {
  const now = Date.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.endByMs);
  timer.unref();
  try {
    return await current.run(
      {
        startBy: now + limits.startByMs,
        endBy: now + limits.endByMs,
        callAttemptTimeoutMs: limits.callAttemptTimeoutMs,
        signal: controller.signal,
      },
      work,
    );
  } finally {
    clearTimeout(timer);
  }
};

export class RequestBudgetSpentError extends ServiceUnavailableError {
  override readonly headers = { 'retry-after': '1' };
  constructor(options?: { cause?: unknown }) {
    super(
      'The request could not be completed in time; nothing was created. Retry it with the same Idempotency-Key.',
      undefined,
      options,
    );
  }
}

/**
 * Runs `read` (finding out whether a write whose answer was lost applied) with calls allowed until the backstop: a
 * request that committed must not answer 503 because its budget ran out while it checked.
 */
export const untilBackstop = <T>(read: () => Promise<T>): Promise<T> => {
  const budget = current.getStore();
  return budget === undefined ? read() : current.run({ ...budget, startBy: budget.endBy }, read);
};

type Sender = { send(command: unknown, options?: unknown): Promise<unknown> };

const TIMED_OUT = new Set(['TimeoutError', 'AbortError']);
const timedOut = (error: unknown): boolean =>
  error instanceof Error && (TIMED_OUT.has(error.name) || (error.cause !== undefined && timedOut(error.cause)));

/**
 * The client with its `send` under the current request's budget: inside one, calls go through `inBudget` (the same
 * client made with a hard per-attempt timeout), a call past the start-by time is refused, and a call that timed out
 * answers RequestBudgetSpentError (503, Retry-After). Outside a request: `client` unchanged.
 */
export const budgeted = <C>(client: C, inBudget: C = client): C => {
  const target = client as unknown as Sender;
  const send = target.send.bind(target);
  const fast = inBudget as unknown as Sender;
  const sendFast = fast === target ? send : fast.send.bind(fast);
  target.send = (command: unknown, options?: unknown) => {
    const budget = current.getStore();
    if (budget === undefined || typeof options === 'function') return send(command, options);
    if (Date.now() >= budget.startBy || budget.signal.aborted) return Promise.reject(new RequestBudgetSpentError());
    return sendFast(command, { abortSignal: budget.signal, ...(options as object | undefined) }).catch(
      (error: unknown) => {
        throw timedOut(error) ? new RequestBudgetSpentError({ cause: error }) : error;
      },
    );
  };
  return client;
};
