// A request sent with an Idempotency-Key, as the domain sees it (the HTTP side, functions/shared/idempotency.ts,
// hashes it): creates that store a claim on the key with their work (deployments: a CreateClaim) use it.
import { ConflictError } from '../errors.js';

/** How long a key names its first request: a retry within it gets the first answer (24 h, as Stripe's). */
export const KEY_HOLDS_SECONDS = 24 * 60 * 60;

export interface KeyedRequest {
  /** The key as sent. */
  readonly key: string;
  /** A hash of (user, credential, key): whose key it is. */
  readonly scope: string;
  /** A hash of the request (method, path, validated body): a retry must be the same request. */
  readonly fingerprint: string;
  /**
   * Set when the key's first request still holds it (in flight, or it ended but its hold could not be cleared): the
   * endpoint answers only what that request made (the key's claim), and KeyInFlightError while it names nothing.
   */
  readonly inFlight?: true;
}

/** A request with this key is still in flight and has made nothing yet: 409, retried once that one has answered. */
export class KeyInFlightError extends ConflictError {
  constructor() {
    super('A request with this Idempotency-Key is still in progress: retry it once that one has answered.', {
      header: 'Idempotency-Key',
    });
  }
}
