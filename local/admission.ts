// Admission control of the local front: how many API requests serverless-offline is given at once. Past its
// capacity it answers everything slowly (its handlers run interleaved in one process); the front keeps at most
// `maxInFlight` requests there, lets others wait in a bounded FIFO queue for at most `maxWaitMs`, and sheds the
// rest at once (the front answers 503 with Retry-After). In the cloud API Gateway's throttling and Lambda's
// concurrency limits play this part (docs/decisions.md, "Overload of the local stack").

export interface AdmissionLimits {
  /** API requests at serverless-offline at once. */
  readonly maxInFlight: number;
  /** Requests waiting for a slot; one more is shed at once. */
  readonly maxQueued: number;
  /** The longest a request waits for a slot before it is shed, past the first `maxInFlight` in the queue. */
  readonly maxWaitMs: number;
  /** Slots of their own for health checks, so a probe still answers when every other slot is busy. */
  readonly healthSlots: number;
}

/** A clock in milliseconds (performance.now by default; tests pass fake time). */
export type Now = () => number;

/** Weight of the newest request in the running mean of how long a request holds its slot. */
const SERVICE_WEIGHT = 0.1;

/**
 * What each lane goes through: `api` the shared slots, `health` its own first, `agent` a gate of its own (the agents'
 * protocol: machine clients whose bursts, 100 completions at once, wait rather than being shed), `exempt` nothing.
 */
export type Lane = 'api' | 'health' | 'agent' | 'exempt';

export type Ticket =
  | { readonly admitted: true; release(): void }
  | { readonly admitted: false; readonly reason: 'queue_full' | 'queue_timeout' | 'left' };

export interface Admission {
  /**
   * Waits for a slot. `done` is the request's lifetime: aborted while waiting, the request leaves the queue
   * (reason `left`); aborted once admitted, its slot is released (as `release()` does; either may come first).
   */
  enter(lane: 'api' | 'health', done: AbortSignal): Promise<Ticket>;
  readonly inFlight: number;
  readonly queued: number;
}

/** GET /api/v1/agent/commands: an agent's long poll, held up to 20 s by design. */
const LONG_POLL = /^\/api\/v1\/agent\/commands\/?$/;
const HEALTH = /^\/api\/v1\/health(\/ready)?\/?$/;
const AGENT = /^\/api\/v1\/agent\//;

/**
 * The lane of an API request. Long polls hold a slot for up to 20 s doing nothing, so they do not take one (each
 * agent holds at most one); event streams and the agents' WebSocket never reach the gate (the front sends them
 * elsewhere). Health checks take a slot of their own first.
 */
export const laneOf = (method: string, path: string): Lane => {
  if (method === 'GET' && LONG_POLL.test(path)) return 'exempt';
  if ((method === 'GET' || method === 'HEAD') && HEALTH.test(path)) return 'health';
  if (AGENT.test(path)) return 'agent';
  return 'api';
};

interface Waiter {
  readonly admit: () => void;
  readonly shed: (reason: 'queue_timeout') => void;
}

/**
 * A request that finds the slots taken joins the queue. The first `maxInFlight` in the queue wait for their turn
 * however long it takes (one round of the requests in flight: a small burst is never shed, however slow its
 * requests). Past them, a request is shed at once when the queue is full or when the queue ahead of it would take
 * longer than `maxWaitMs` to drain at the running mean of how long a request holds its slot, and is shed after
 * `maxWaitMs` if it is still waiting then.
 */
export const createAdmission = (limits: AdmissionLimits, now: Now = () => performance.now()): Admission => {
  let inFlight = 0;
  let healthInFlight = 0;
  /** Running mean of the time a request holds a shared slot, in ms; 0 until one was released. */
  let serviceMs = 0;
  const queue: Waiter[] = [];
  const expectedWaitMs = (position: number) => Math.ceil(position / limits.maxInFlight) * serviceMs;
  /** A gate with no bound on waiting (maxWaitMs Infinity) sheds only past maxQueued. */
  const bounded = Number.isFinite(limits.maxWaitMs);

  /** A slot held until released or the request's end, whichever comes first; released once. */
  const hold = (done: AbortSignal, free: () => void): Ticket => {
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      done.removeEventListener('abort', release);
      free();
    };
    done.addEventListener('abort', release);
    return { admitted: true, release };
  };

  const takeShared = (done: AbortSignal): Ticket => {
    inFlight += 1;
    const since = now();
    return hold(done, () => {
      const held = now() - since;
      serviceMs = serviceMs === 0 ? held : serviceMs + SERVICE_WEIGHT * (held - serviceMs);
      freeShared();
    });
  };

  const freeShared = () => {
    inFlight -= 1;
    const next = queue.shift();
    if (next !== undefined) next.admit();
  };

  const enter = (lane: 'api' | 'health', done: AbortSignal): Promise<Ticket> => {
    if (done.aborted) return Promise.resolve({ admitted: false, reason: 'left' });
    if (lane === 'health' && healthInFlight < limits.healthSlots) {
      healthInFlight += 1;
      return Promise.resolve(hold(done, () => void (healthInFlight -= 1)));
    }
    if (inFlight < limits.maxInFlight && queue.length === 0) return Promise.resolve(takeShared(done));
    const position = queue.length + 1;
    const patient = !bounded || position <= limits.maxInFlight;
    if (queue.length >= limits.maxQueued || (!patient && expectedWaitMs(position) > limits.maxWaitMs))
      return Promise.resolve({ admitted: false, reason: 'queue_full' });
    return new Promise<Ticket>((resolve) => {
      const leave = () => {
        if (timer !== undefined) clearTimeout(timer);
        done.removeEventListener('abort', left);
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
      };
      const left = () => {
        leave();
        resolve({ admitted: false, reason: 'left' });
      };
      const waiter: Waiter = {
        admit: () => {
          leave();
          resolve(takeShared(done));
        },
        shed: (reason) => {
          leave();
          resolve({ admitted: false, reason });
        },
      };
      const timer = patient ? undefined : setTimeout(() => waiter.shed('queue_timeout'), limits.maxWaitMs);
      done.addEventListener('abort', left);
      queue.push(waiter);
    });
  };

  return {
    enter,
    get inFlight() {
      return inFlight + healthInFlight;
    },
    get queued() {
      return queue.length;
    },
  };
};
