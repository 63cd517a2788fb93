// The general rate limit's policy (RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST per client address), counted in the
// front's memory for one purpose: when the admission gate sheds a request, to tell a client that is over its own
// limit (429, the service's answer, which it would get in the cloud where no gate stands in front of the limiter)
// from one caught in an overload others made (503). The service's limiter stays the authority for every request
// that gets through; this count never refuses a request the gate admits.

export interface AddressLimit {
  /** Counts a request of `address`: true while the address is within the policy, else false with the wait. */
  take(address: string): { readonly within: boolean; readonly retryAfterSeconds: number };
}

/** GCRA per address (the same algorithm as the service's shared bucket), in milliseconds of `now`. */
export const createAddressLimit = (
  policy: { readonly ratePerSecond: number; readonly burst: number },
  now: () => number = () => performance.now(),
): AddressLimit => {
  const interval = 1000 / policy.ratePerSecond;
  const tolerance = interval * (policy.burst - 1);
  /** Theoretical arrival time per address; entries in the past are equivalent to none and are dropped. */
  const arrivals = new Map<string, number>();
  let sweepAt = now();
  return {
    take(address) {
      const at = now();
      if (at - sweepAt > 60_000) {
        for (const [key, tat] of arrivals) if (tat < at) arrivals.delete(key);
        sweepAt = at;
      }
      const tat = Math.max(arrivals.get(address) ?? at, at);
      if (tat - at > tolerance) return { within: false, retryAfterSeconds: Math.ceil((tat - tolerance - at) / 1000) };
      arrivals.set(address, tat + interval);
      return { within: true, retryAfterSeconds: 0 };
    },
  };
};
