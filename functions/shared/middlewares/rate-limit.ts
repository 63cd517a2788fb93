// The general rate limit per client address: the plain-text 429, failing open (or 503 on the auth routes).
import { ConfigurationError } from '../../../domain/errors.js';
import type { RateDecision } from '../../../domain/identity/ports.js';
import { clientIp } from '../client-ip.js';
import { logger } from '../logger.js';
import { BASE_HEADERS, serviceUnavailable, ShellAnswer } from './answers.js';
import type { Middleware, Result } from './request-state.js';

/** Client address -> whether the general rate limit (per address, shared by every instance) lets it through. */
export type RateGate = (ip: string) => Promise<RateDecision>;

/** The spec's general-limiter answer: 429, plain text, Retry-After and X-RateLimit-Remaining: 0. */
const tooManyRequests = (decision: RateDecision): Result => ({
  statusCode: 429,
  headers: {
    ...BASE_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'retry-after': String(Math.max(1, decision.retryAfterSeconds)),
    'x-ratelimit-remaining': '0',
  },
  body: 'Too Many Requests: slow down and retry after the Retry-After seconds.',
});

/** Seconds an auth route asks the client to wait when the limiter's store is down. */
export const LIMITER_DOWN_RETRY_SECONDS = 5;

/**
 * The general rate limit per client address. Fails open: when the limiter's store cannot answer, the request goes
 * through (and the failure is logged); except with `limiterDown: 'refuse'` (the auth routes: guessing passwords
 * must not get faster when the store fails), which answers 503 with Retry-After. A configuration that does not
 * parse is not a store failure: it answers 500 CONFIGURATION_ERROR everywhere (a retry would not help).
 */
export const rateLimit = (gate: RateGate, options: { readonly limiterDown?: 'refuse' } = {}): Middleware => ({
  before: async function applyRateLimit(request) {
    let decision: RateDecision;
    try {
      decision = await gate(clientIp(request.event));
    } catch (error) {
      if (error instanceof ConfigurationError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      if (options.limiterDown === 'refuse') {
        logger.warn('rate limiter unavailable; auth request refused', { error: message });
        throw new ShellAnswer(
          serviceUnavailable(
            'The service cannot check its rate limits right now; retry shortly.',
            LIMITER_DOWN_RETRY_SECONDS,
          ),
        );
      }
      logger.warn('rate limiter unavailable; request allowed', { error: message });
      return;
    }
    if (!decision.allowed) throw new ShellAnswer(tooManyRequests(decision));
  },
});
