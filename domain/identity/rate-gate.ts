// The general rate limit without a write per request. The shared bucket (RateLimiter: GCRA on one item per client
// address, shared by every function instance) stays the only source of tokens; an instance takes a *lease* of
// several tokens in one write and spends them locally, one per request, until they run out or the lease expires.
//
// How far a client can exceed the limit: every token an instance spends was first taken from the shared bucket,
// so the sustained rate is exactly the policy's. Tokens taken before a window and spent in it come on top of what
// the bucket gives in that window: at most K * (leaseSize - 1) for a client on K instances (9 per instance with the
// spec's policy, against a burst of 200). The other way, tokens of a lease that expires unspent are lost: a client
// may be refused up to K * (leaseSize - 1) requests early. Near the limit an instance takes one token per request,
// so the last tokens of a burst are not stranded in leases. Concurrent requests of one client on one instance (one
// process serves them all locally) share one write at a time. (docs/decisions.md)
//
// Writes: one per `leaseSize` requests of a client on one instance (leaseSize = burst / 20, 1 to 10: 10 with the
// spec's 100/s, burst 200, so 0.1 writes per request), up to two per request near the limit, and at most two
// (failed) per instance per Retry-After period for a client past the limit: a refusal is remembered until the
// Retry-After it announced, so a flood costs no writes (a client may be refused up to a second longer than the
// bucket alone would, never less).
import type { Clock } from '../shared/ports.js';
import type { RateDecision, RateLimiter, RatePolicy } from './ports.js';

export interface RateGateSettings {
  /** Tokens taken per write; default burst / 20, from 1 to 10. */
  readonly leaseSize?: number;
  /** How long an instance may spend a lease's tokens; default 60 s (long enough for sparse clients to share a write). */
  readonly leaseMs?: number;
  /** Clients remembered per instance (the oldest lease is dropped beyond it); default 10,000. */
  readonly maxClients?: number;
}

interface Lease {
  /** Tokens left to spend; 0 with `refusedUntil` set: the bucket refused, so the instance refuses until then. */
  tokens: number;
  readonly expiresAt: number;
  readonly refusedUntil?: number;
}

/** burst / 20, from 1 to 10: 10 for the spec's burst of 200, 1 for small bursts (exact, a write per request). */
export const defaultLeaseSize = (burst: number): number => Math.max(1, Math.min(10, Math.floor(burst / 20)));

/** A client address -> whether the request may go on: spends a local token, or takes a lease from the shared bucket. */
export const amortisedRateGate = (
  limiter: RateLimiter,
  policy: () => RatePolicy,
  clock: Clock,
  settings: RateGateSettings = {},
): ((key: string) => Promise<RateDecision>) => {
  const leases = new Map<string, Lease>();
  // The write in progress per client: concurrent requests of one instance wait for it and spend its lease, instead
  // of each taking a lease of its own that would replace the last (and lose its unspent tokens).
  const taking = new Map<string, Promise<unknown>>();
  const leaseMs = settings.leaseMs ?? 60_000;
  const maxClients = settings.maxClients ?? 10_000;
  /** The answer from what the instance holds, or undefined when it must take tokens from the bucket. */
  const fromHeld = (key: string, now: Date): RateDecision | undefined => {
    const held = leases.get(key);
    if (held?.refusedUntil !== undefined && held.refusedUntil > now.getTime()) {
      // A flood past the limit costs no write: the bucket said when the next token comes (Retry-After).
      return {
        allowed: false,
        remaining: 0,
        retryAfterSeconds: Math.max(1, Math.ceil((held.refusedUntil - now.getTime()) / 1_000)),
      };
    }
    if (held !== undefined && held.expiresAt > now.getTime() && held.tokens > 0) {
      held.tokens -= 1;
      return { allowed: true, remaining: held.tokens, retryAfterSeconds: 0 };
    }
    return undefined;
  };
  const take = async (key: string, now: Date): Promise<RateDecision> => {
    leases.delete(key);
    const remember = (lease: Lease): void => {
      if (leases.size >= maxClients) leases.delete(leases.keys().next().value as string);
      leases.set(key, lease);
    };
    const current = policy();
    const size = Math.min(settings.leaseSize ?? defaultLeaseSize(current.burst), current.burst);
    const lease = await limiter.take(key, current, now, size);
    if (lease.allowed) {
      if (size > 1) remember({ tokens: size - 1, expiresAt: now.getTime() + leaseMs });
      return { allowed: true, remaining: lease.remaining + size - 1, retryAfterSeconds: 0 };
    }
    // Not room for a whole lease: near the limit, one token at a time.
    const single = size > 1 ? await limiter.take(key, current, now, 1) : lease;
    if (!single.allowed) {
      // Refused until the Retry-After the client is told (whole seconds: at most that much longer than the bucket).
      const until = now.getTime() + single.retryAfterSeconds * 1_000;
      remember({ tokens: 0, expiresAt: until, refusedUntil: until });
    }
    return single;
  };
  return async (key) => {
    for (;;) {
      const now = clock.now();
      const decision = fromHeld(key, now);
      if (decision !== undefined) return decision;
      const pending = taking.get(key);
      if (pending === undefined) break;
      await pending.catch(() => undefined);
    }
    const taken = take(key, clock.now());
    taking.set(key, taken);
    try {
      return await taken;
    } finally {
      taking.delete(key);
    }
  };
};
